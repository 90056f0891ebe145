/**
 * Whether an answer of the migration verifier is this cutover's, in one place: the `verify`
 * step's judge, every condition of a `waitFor` or `assert` on the verifier, `status`, the report
 * and the live view ask it (`verifierEarned`), never a rule of their own. Pure: it reads the run's
 * memory of what it asked the verifier (`VerifierMemory`, rebuilt from the journal by
 * src/journal/verifier.ts for `--resume` and `status`) and one progress answer.
 *
 * Why a verifier answer proves nothing by itself (service facts, "The migration verifier";
 * verifier source, mongodb-labs/migration-verifier tag v0.2.1, internal/verifier/progress.go
 * `getPhaseWhileLocked`: "if !verifier.running { return Idle }"): `idle` is the answer of a
 * verifier that never ran a check, of one that finished someone else's verification, and of a
 * restarted process. The documentation's success test ("When the `phase` field is `idle`, the
 * verification checks are complete. If the `failedTasks` field returns 0, the sync was
 * successful": mongodb/docs-cluster-to-cluster-sync, branches v1.7 to v1.13,
 * source/reference/verification/verifier.txt) holds only for a verification this cutover started
 * and told `writesOff`. So an answer earns:
 *
 * - **this cutover's check** when this run's check reached the verifier (accepted, or sent
 *   without an answer and shown running), its first answers showed a verification of this
 *   cutover's (a fresh start, this run's own resumed after a restart, or one adopted), and no
 *   other process answers since (`newProcess`);
 * - **this cutover's result** when, besides, this run's `writesOff` reached it and the answer is
 *   `idle` in a generation past the one `writesOff` was sent in (after `writesOff` the verifier
 *   finishes its generation and runs one more: check.go `CheckDriver`), `error` null, no task
 *   still added or processing (`notEarned`).
 */
import { generationDocs } from "../../api/progress.js";
import type { VerifierProgress } from "../../api/types.js";
import { eventsSeen, isRecord } from "../../api/verifier-memory.js";
import { verifierDocsText } from "../../text.js";
import { formatDuration } from "../../runbook/duration.js";
import type { VerifierNeed, VerifierStanding } from "../../fleet/index.js";
import type { VerifierMemory } from "./context.js";
import type { VerifyFailed } from "../../model/verify-failed.js";
import type { CutoverModel } from "../../model/contract.js";
import { commitOnRecord, syncCommits } from "../../model/fold.js";

/** Marks the progress syncbook reads into an empty HTTP 500 (not the verifier's own field). */
export const EMPTY_500 = "syncbookEmptyHttp500";

/**
 * The releases that answer progress with an empty HTTP 500 until a check (service facts; verifier
 * source: progress.go reads the change readers, which exist only once a check set them up, until
 * commit cdc956c1 "Fix /progress crash when idle", first in v0.2.1).
 */
export const OLD_RELEASE =
  "verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1)";

/**
 * Idle at generation 0: no check ran in this process (a fresh one, or a restarted one before its
 * check). A progress without a generation (the contract's) reads as generation 0 here: the protocol
 * treats it as "nothing started" and fails the result for want of a generation (`notEarned`).
 */
const idleAtZero = (p: VerifierProgress): boolean => p.phase === "idle" && (p.generation ?? 0) === 0;

const STATUS_COUNTERS = [
  "totalTasks",
  "addedTasks",
  "processingTasks",
  "completedTasks",
  "failedTasks",
  "metadataMismatchTasks",
] as const;

/** No check has ever run on this verifier's metadata: idle, generation 0, no task (or a new metadata database). */
export function notStarted(p: VerifierProgress): boolean {
  const s = p.verificationStatus ?? {};
  return idleAtZero(p) && STATUS_COUNTERS.every((k) => (s[k] ?? 0) === 0);
}

/**
 * Idle at generation 0 with tasks: a process whose metadata holds an earlier verification, before
 * its first check. Started without `--clean` its check resumes it; started with `--clean` its check
 * drops it first (check.go `CheckDriver`: `if verifier.startClean { … Drop … }`): until a check,
 * nothing tells the two apart.
 */
export const persisted = (p: VerifierProgress): boolean => idleAtZero(p) && !notStarted(p);

/** A verification ran to its end in this process: idle past generation 0 (a check now would panic it). */
export const finished = (p: VerifierProgress): boolean => p.phase === "idle" && !idleAtZero(p);

/** Tasks of the current generation that are done: completed, failed, or a metadata mismatch. */
export function doneTasks(p: VerifierProgress): number {
  const s = p.verificationStatus ?? {};
  // a missing counter is NaN: no comparison meets it
  return (s.completedTasks ?? NaN) + (s.failedTasks ?? NaN) + (s.metadataMismatchTasks ?? NaN);
}

/**
 * Why `p` comes from another verifier process than the one this verification's reads came from
 * (once its check ran), or undefined: a generation below the highest seen, or idle at generation 0.
 */
export function newProcess(m: VerifierMemory, p: VerifierProgress): string | undefined {
  const hi = m.highestGeneration;
  const g = p.generation;
  // without generations (the contract's progress alone) a restart cannot be told from an end: judged as a result, not one
  if (g === undefined) return undefined;
  if (idleAtZero(p)) {
    if (p[EMPTY_500] === true) return `an empty HTTP 500 on progress: ${OLD_RELEASE}, before a check`;
    return notStarted(p)
      ? "phase idle, generation 0, no task: a process started on a new metadata database (or with --clean, once a check arrives)"
      : "phase idle, generation 0, with tasks: a process before its check, showing the counters its metadata holds (with or without --clean: they look the same until a check)";
  }
  // no highest generation yet: NaN, below which nothing is
  if (g < (hi ?? NaN)) return `generation ${g}, below the ${hi} it had shown`;
  const n = eventsSeen(p);
  // an adversarial run: killed during verify, the verifier restarted on new metadata and driven by
  // someone else's check and writesOff past the journaled generation; the resume called it verified.
  // A restart without --clean drops it too: migration-verifier v0.2.1 saves the count with its
  // resume token (change_reader.go persistResumeToken) at most every 10 s (recheck_persist.go
  // minResumeTokenPersistInterval), and a new process resumes from the saved one (helper 98). Both
  // are a new process, whose verification this run follows again (followRestart)
  return (n ?? NaN) < (m.highestEvents ?? NaN)
    ? `${n} change events counted, below the ${m.highestEvents} it had shown: a new process (the count is saved with the verification at most every 10 s, so a restart loses the last seconds' and another verification, on other metadata or after --clean, starts from 0)`
    : undefined;
}

/** Every read of the verifier's progress moves the highest generation and event count seen (lower ones are a new process). */
export function observeVerifier(m: VerifierMemory, p: VerifierProgress): void {
  const g = p.generation;
  if (typeof g === "number" && g > (m.highestGeneration ?? -1)) m.highestGeneration = g;
  const n = eventsSeen(p);
  if (n !== undefined) m.highestEvents = Math.max(n, m.highestEvents ?? n);
}

/**
 * After this run's check, whether the first answer that shows a check running is a fresh
 * verification of this cutover's, or `why` it is not. Asked only when the answer before the check
 * could not tell (`VerifierMemory.unproven`): idle at generation 0 with tasks (`baseline`: the
 * counters it showed), or an empty HTTP 500 (no baseline: releases v0.1.6 to v0.2.0).
 *
 * The verifier's source (check.go `CheckDriver`): without `--clean` a check reads the persisted
 * generation ("Resuming in-progress verification") and goes on with the persisted tasks; with
 * `--clean` it drops the metadata and starts at generation 0 with new tasks. So a generation past
 * 0 is a resumed verification; at generation 0 a resumed one goes on from the persisted counters,
 * whose done tasks never decrease within the generation, so fewer done tasks than the baseline
 * showed is a fresh start. Where that cannot tell (no baseline, or a baseline with nothing done),
 * only "nothing done yet" counts as fresh: the reading that fails safe (a resumed generation 0 in
 * which nothing was done compares every document after this run's check, as a fresh one does).
 */
export function freshStart(
  p: VerifierProgress,
  baseline: VerifierProgress | undefined,
  late = false,
  afterMs?: number,
): string | undefined {
  const g = p.generation;
  if (typeof g !== "number")
    return "its progress has no generation, so a fresh verification cannot be told from a resumed one";
  const done = g > 0 ? NaN : doneTasks(p);
  if (done === 0) return undefined;
  const before = baseline === undefined || baseline[EMPTY_500] === true ? NaN : doneTasks(baseline);
  if (done < before) return undefined;
  const shows =
    g > 0
      ? `generation ${g}`
      : `generation 0 with ${Number.isNaN(done) ? "no readable counters" : `${done} task(s) already done`}${Number.isNaN(before) ? "" : ` (the ${before} done before the check)`}`;
  // `late`: its first answers went unread (the run or step that sent the check ended before them); a fresh
  // verification gets past generation 0, or past the tasks done before, in time too
  if (late)
    return `it shows ${shows} by the first answer read: its first answers went unread (the run or step that sent the check ended before them), and a fresh verification gets there in time as a resumed one does, so which this is cannot be told`;
  // `afterMs`: from the check sent to this answer. A slow answer is not "at once"; still, a fresh
  // verification leaves generation 0 only after its workers did every task of it, every document
  // compared (check.go `CheckDriver`: `generation++` after `CheckWorker`)
  const when =
    afterMs === undefined ? "at once" : `in its first answer, read ${formatDuration(afterMs)} after the check was sent`;
  return g > 0
    ? `it shows ${shows} ${when}: the check resumed a verification its metadata held (a fresh one starts at generation 0, and leaves it only once every document was compared)`
    : `${shows}: the counters of a resumed verification, not of a fresh start`;
}

/** The counters a result is read from. */
const RESULT_COUNTERS = ["addedTasks", "processingTasks", "failedTasks", "metadataMismatchTasks"] as const;

/**
 * Why an idle answer is not this run's result, or undefined when it is one: a generation past
 * writesOff's (the verifier finishes the generation it is in, then runs one more), and no task
 * still added or processing. (A new process and a non-null `error` are caught before: the
 * reader fails on an error, awaitResult follows a restart.)
 */
export function notEarned(p: VerifierProgress, writesOffGeneration: number | undefined): string | undefined {
  const g = p.generation;
  if (typeof g !== "number")
    return "the verifier's progress has no generation, so it cannot be tied to this run's writesOff";
  if (typeof writesOffGeneration !== "number")
    return "the generation this verification's writesOff was sent in is not known (a journal from an older syncbook?)";
  if (g <= writesOffGeneration)
    return `generation ${g} is not past generation ${writesOffGeneration}, the one writesOff was sent in`;
  // `Generation int` (v0.2.1 internal/verifier/api/api.go)
  if (!Number.isInteger(g)) return `generation ${g} is not a whole number: not the verifier's answer`;
  const s = p.verificationStatus ?? {};
  const missing = RESULT_COUNTERS.filter((k) => typeof s[k] !== "number");
  if (missing.length > 0)
    return `no ${missing.join(", ")} counter${missing.length > 1 ? "s" : ""} to read the result from`;
  const impossible = notTheVerifiers(s);
  if (impossible !== undefined) return impossible;
  // `recheckTasks` (the contract lists it; v0.2.1 sends none): rechecks still to do
  const pending = (["addedTasks", "processingTasks", "recheckTasks"] as const).filter(
    (k) => s[k] !== undefined && s[k] !== 0,
  );
  if (pending.length > 0)
    return `${pending.map((k) => `${k} ${String(s[k])}`).join(", ")}: tasks not done in a finished verification`;
  return undefined;
}

/**
 * Why a result's counters are none the verifier sends, or undefined. migration-verifier v0.2.1
 * sends all six, each a count of the generation's tasks by status, and `totalTasks` is their sum:
 * internal/verifier/migration_verifier.go `getVerificationStatusForGeneration` (lines 1709-1780:
 * `$sum: 1` per status; `TotalTasks += int(count)` for every status, known or not, the known ones
 * also in their own field), internal/verifier/api/api.go `VerificationStatus` (six `int` fields, no
 * omitempty). Fail safe: a total above the sum holds tasks of a status the verifier logs as
 * unknown, neither done nor passed; a negative, fractional or missing count is not its answer, and
 * no result is read from it (a conformance read).
 */
function notTheVerifiers(s: NonNullable<VerifierProgress["verificationStatus"]>): string | undefined {
  const bad = STATUS_COUNTERS.filter((k) => !(Number.isInteger(s[k]) && (s[k] as number) >= 0));
  if (bad.length > 0)
    return `${bad.map((k) => `${k} ${s[k] === undefined ? "missing" : JSON.stringify(s[k])}`).join(", ")}: the verifier sends each of its six task counters as a whole number of 0 or more`;
  const parts = STATUS_COUNTERS.filter((k) => k !== "totalTasks").reduce((n, k) => n + (s[k] as number), 0);
  if (s.totalTasks !== parts)
    return `totalTasks ${s.totalTasks} is not the sum of the other five counters (${parts}): the verifier counts every task in it, one of a status it does not know there alone, neither done nor passed`;
  return undefined;
}

/**
 * Why a finished verification would be called verified having compared fewer documents, for this
 * cutover, than a fresh verification compares, or undefined (the guard `verify` asks right before
 * it says "verified": issue 36, point 3). A fresh verification compares every document once, in
 * generation 0; later generations recheck only what changed. So the total of a fresh verification
 * is compared by this cutover only if this cutover's verification began at generation 0
 * (`VerifierMemory.fromStart`); one whose first generations were another's (a check adopted past
 * generation 0, a verification resumed from an earlier cutover's metadata, a journal that does not
 * say) compared, for this cutover, only the rechecks of its later generations.
 *
 * Why this is not a comparison of the answer's two counters (verifier source,
 * mongodb-labs/migration-verifier tag v0.2.1; the same in v0.1.6 to v0.2.0):
 * internal/verifier/statistics.go (`perNsStatsPipelineTemplate`): `generationStats` is the current
 * generation's: `docsCompared` sums "$found_source_documents_count" of its finished tasks, and
 * `totalDocs` is, "In generation 0 … the total docs from the verify-collection tasks. In
 * generation 1+ … the # of documents to recheck"; internal/verifier/tasks/task.go: a collection
 * task's count is "the source collection's estimated docs count", and FoundSourceDocumentsCount
 * "the number of docs found on the source". A finished result (idle, generation 1 or later) thus
 * shows fewer compared than its total whenever a rechecked document was deleted, and generation 0
 * fewer than its estimated total whenever documents were deleted while it ran: a rule on those
 * counters would refuse valid verifications, and `gen0Stats` (api.go from v0.1.10: "the final
 * doc/byte counts from generation 0"; progress.go sums them from the metadata) counts a resumed
 * verification's earlier process too. They are said, not judged.
 */
export function notFromStart(m: VerifierMemory, p: VerifierProgress): string | undefined {
  if (m.fromStart === true) return undefined;
  const first = m.baseline?.phase === "idle" ? undefined : m.baseline?.generation;
  // the counters in their one wording (src/text.ts verifierDocsText); gen0Stats' total is an estimate
  const docs = generationDocs(p.generationStats);
  const g0 = generationDocs(p.gen0Stats);
  const generation = typeof p.generation === "number" ? p.generation : undefined;
  const compared = docs
    ? `its last generation${generation === undefined ? "" : `, ${generation},`} shows ${verifierDocsText(generation, docs)}`
    : "no documents counted in its last generation";
  const fresh = g0 ? `every document (about ${g0.total}: generation 0's estimated count)` : "every document";
  return `this cutover's verification did not begin at generation 0 for this cutover (${first === undefined ? "not known where it began: a journal from an older syncbook?" : `it was first seen in generation ${first}, started outside this run`}), so it compared, for this cutover, not ${fresh} a fresh verification compares in generation 0: ${compared}`;
}

/**
 * Why a finished, passing result compared nothing, or undefined: its generation 0 verified no
 * namespace, or compared no document of an estimated total above 0. Read from `gen0Stats`
 * (migration-verifier v0.2.1 progress.go lines 81-97: generation 0's statistics, sent from
 * generation 1 on; summary.go lines 362-365: none persisted, all 0). A verifier started without
 * `--verifyAll` or `--srcNamespace` creates no task (check.go `CreateInitialTasksIfNeeded`: "if
 * len(verifier.srcNamespaces) == 0 { return nil }"), and its generations end at once: idle, no task
 * failed, and every output said "verified" (an outside conformance review). A check whose filter
 * matches no document compares none. Not published: whether a source with no collection at all
 * answers otherwise; the reading that fails safe is that it is not verified (nothing was
 * compared). An answer without `gen0Stats` (before v0.1.10, or a verifier outside the contract,
 * whose progress lists no such field) is not judged here.
 */
export function comparedNothing(p: VerifierProgress, filter: string | undefined): string | undefined {
  const g0: unknown = p.gen0Stats;
  if (typeof g0 !== "object" || g0 === null) return undefined;
  const namespaces = (g0 as { totalNamespaces?: unknown }).totalNamespaces;
  if (namespaces === 0)
    return "the verifier compared no collection: its generation 0 verified 0 namespaces (gen0Stats.totalNamespaces 0), so no task could fail";
  const docs = generationDocs(g0);
  if (docs !== undefined && docs.compared === 0 && docs.total > 0)
    return filter !== undefined
      ? `the check's filter ${filter} matched no document: generation 0 compared 0 of about ${docs.total}`
      : `generation 0 compared 0 documents of about ${docs.total}`;
  return undefined;
}

/**
 * Why no answer can be this cutover's check (or result) with what the run has asked so far, or
 * undefined: reasons that no progress read can change (a wait on them would only run out of time).
 */
export function memoryWhyNot(m: VerifierMemory, need: VerifierNeed): string | undefined {
  if (m.refused !== undefined && !m.check)
    return `this cutover refused the verification the verifier showed after its check (${m.refused}), and no check of its own runs`;
  if (!m.check || m.check.answered === "error")
    return m.reversed !== undefined
      ? `a reverse was sent (step ${m.reversed}) since this cutover's last check: what the verifier shows is the sync's before it, and no check since reached it`
      : "no check of this cutover's reached the verifier (a `startVerification` or `verify` step sends it)";
  if (m.unproven !== undefined)
    return "this cutover's check has not shown yet whether it started a fresh verification or resumed an earlier one";
  if (need === "check") return undefined;
  if (!m.writesOff || m.writesOff.answered === "error")
    return "no writesOff of this cutover's reached the verifier (the `verify` step sends it, after the commit): its check never ends before it";
  if (m.writesOffForced === true) return WRITES_OFF_FORCED;
  return undefined;
}

/** What a forced `writes-stopped` interlock let through was sent with: one wording, for writesOff and commit. */
const FORCED_WRITES = "with the application's writes not known stopped (its writes-stopped interlock was forced)";

/**
 * A writesOff sent past the `writes-stopped` interlock: the verifier compares nothing written after
 * it ("after writes on the source have stopped", the verifier's README workflow; service facts),
 * so its result verifies nothing of a source still written to.
 */
export const WRITES_OFF_FORCED = `this cutover's writesOff was sent ${FORCED_WRITES}: the verifier never compares writes after it, so no result of it verifies this cutover`;

/**
 * A commit sent past its forced `writes-stopped` interlock (`RunMemory.commitWritesForced`): the
 * verify step does not count it as writes stopped, and refuses writesOff for it.
 */
export const COMMIT_WRITES_FORCED = `this sync's commit was sent ${FORCED_WRITES}, and no stopWrites step has held since`;

/**
 * Whether `p` is this cutover's check and this cutover's verification result, each with why not
 * (one home: the verify step, waitFor and assert, status, the report and the live view ask it).
 */
export function verifierEarned(m: VerifierMemory, p: VerifierProgress): VerifierStanding {
  const other = newProcess(m, p);
  // a check sent without an answer may not have reached the verifier (a run killed with it in
  // flight, a request lost): said, so that an idle answer is not read as a new process only. No
  // "yet": status may read this hours later, when it will never arrive
  const lost =
    m.check?.answered === "unknown"
      ? `; this cutover's check was sent${Number.isFinite(m.check.at) ? ` at ${new Date(m.check.at).toISOString()}` : ""} and no answer came: it may not have reached the verifier`
      : "";
  const check =
    memoryWhyNot(m, "check") ??
    (other === undefined ? undefined : `the verifier does not show this cutover's check (${other})${lost}`);
  if (check !== undefined) return { check, result: check };
  const result =
    memoryWhyNot(m, "result") ??
    (p.error !== null && p.error !== undefined
      ? `the verifier reports an error: ${JSON.stringify(p.error)}`
      : p.phase !== "idle"
        ? `phase ${p.phase}: the verification has not finished`
        : notEarned(p, m.writesOffGeneration));
  if (result !== undefined) return { result };
  // a result otherwise this cutover's, of a verification not known to have begun at generation 0
  // for it: no condition counts it, and `verify` refuses it (verify.ts judge)
  const short = notFromStart(m, p);
  if (short !== undefined) return { result: short, notFromStart: true };
  // a result that compared nothing verifies nothing (a verifier given no namespace, a filter that matches none)
  const nothing = comparedNothing(p, m.filter);
  if (nothing !== undefined) return { result: nothing, comparedNothing: true };
  // a result that passed over DDL on the source verifies less than the source holds
  const ddl = skippedSourceDdl(p);
  return ddl === undefined ? {} : { result: ddl, skippedDdl: true };
}

/** The source's DDL the verifier counts and, under `--ddlHandling warnMost`, skips (api/change_event_counts.go). */
const DDL_EVENTS = [
  "create",
  "modify",
  "createIndexes",
  "dropIndexes",
  "shardCollection",
  "reshardCollection",
  "refineCollectionShardKey",
] as const;

/**
 * Why a finished, passing result passed over DDL on the source, or undefined. migration-verifier
 * v0.2.1: under `--ddlHandling warnMost` a source event of those types is warned of and counted,
 * not verified (internal/verifier/change_stream.go lines 222-224, change_reader.go
 * `allowedSrcDDLOpTypes`), and its README says "warnMost makes the verifier instead show a warning
 * and skip most DDL events. (In this case you **MUST** manually confirm that the change is
 * replicated to the destination.)". `srcChangeStats.eventCounts` holds them, cumulative "since the
 * verifier first started" (api/change_event_counts.go). Under the default `failAll` any DDL makes
 * the verifier exit, so a count above 0 with a finished answer is that skip: no syncbook output may
 * say "verified" for what the verifier says it did not verify (a conformance read).
 */
export function skippedSourceDdl(p: VerifierProgress): string | undefined {
  const side: unknown = p.srcChangeStats;
  const counts: unknown = isRecord(side) ? side.eventCounts : undefined;
  if (!isRecord(counts)) return undefined;
  // fail safe: a count other than 0 (or absent) is DDL seen, whatever its form
  const seen = DDL_EVENTS.map((k) => [k, counts[k]] as const).filter(([, n]) => n !== undefined && n !== 0);
  if (seen.length === 0) return undefined;
  return `the verifier skipped DDL on the source (${seen.map(([k, n]) => `${k} ${JSON.stringify(n)}`).join(", ")}; --ddlHandling warnMost), which it does not verify: its README says you MUST then confirm by hand that each change reached the destination`;
}

/**
 * Whether this cutover is verified, and why not, for every reader of a run's end (its last line,
 * the rehearsal verdict, the report, the job summary, the wave report): verified only when a
 * `verify` step passed on this cutover's result (`verifier.verified`, kept by the run's memory and
 * the journal); a cutover without it is "not verified", never "safe" (the cutover page: "Before
 * you switch your application workload to the destination cluster, you should always verify a
 * successful sync", mongodb/docs content/mongosync/current/source/reference/cutover-process.txt).
 *
 * Never verified once an instance was seen stopped during the commit (`stopped`, src/fleet/window.ts
 * `StoppedInCommit`), whatever a verify said: "If mongosync stops during commit, before the
 * /progress endpoint reports canWrite: true, you must restart the entire migration to ensure that
 * it's verified" (mongodb/docs-cluster-to-cluster-sync source/includes/fact-verification.rst). The
 * reading that fails safe: a verify that passed does not ensure it (a forced resume ran it, and
 * every output said "verified").
 *
 * `failed`: the last `verify` step of the runs that count failed, its step and its error
 * (src/model/verify-failed.ts): named in the why, as the step said it. "No `verify` step passed"
 * alone left the report and the watch page silent on why (a result refused for DDL the verifier
 * skipped) where the run's failure and `status` said it.
 */
export function verification({
  passed: verified,
  kinds,
  reversed,
  stopped,
  filter,
  failed,
}: {
  /** A `verify` step passed on this cutover's result (`verifier.verified`). */
  passed: boolean;
  /** The runbook's step kinds: without a `verify` step, that is the why. */
  kinds: readonly string[];
  /** A reverse sent since the verification began (its step). */
  reversed?: string | undefined;
  /** An instance seen stopped during the commit (and every other one after it). */
  stopped?: { instance: string; also?: readonly string[] | undefined } | undefined;
  /** The check's filter (JSON): verified are only the documents it matches. */
  filter?: string | undefined;
  /** The last `verify` step of the runs that count that failed. */
  failed?: VerifyFailed | undefined;
}): { verified: true; filter?: string } | { verified: false; why: string } {
  if (stopped)
    return {
      verified: false,
      why: `${[stopped.instance, ...(stopped.also ?? [])].join(", ")} stopped during the commit before the destination took writes: the documentation says the entire migration must then be restarted to ensure that it is verified${verified ? ", whatever the verify step said" : ""}`,
    };
  if (verified) return filter !== undefined ? { verified: true, filter } : { verified: true };
  return {
    verified: false,
    why:
      reversed !== undefined
        ? `a reverse was sent (step ${reversed}): the verification before it does not speak for the sync that runs now, and no \`verify\` step passed since`
        : failed !== undefined
          ? `no \`verify\` step passed on this cutover's verification result: step ${failed.step} "${failed.id}" failed${failed.error === undefined ? "" : `: ${failed.error}`}`
          : kinds.includes("verify")
            ? "no `verify` step passed on this cutover's verification result"
            : "the runbook has no `verify` step",
  };
}

/**
 * A check with a filter is "to only check documents within that filter" (mongodb-labs/
 * migration-verifier README.md, v0.2.1): its result verifies those alone. An adversarial run: a filter
 * that matches no document, and every output said "verified".
 */
export const filteredWords = (filter: string): string => `only the documents the check's filter ${filter} matches`;

/** "verified" / "verified (only …)" / "not verified (why)": the words every output uses. */
export const verificationText = (v: {
  verified: boolean;
  why?: string | undefined;
  filter?: string | undefined;
}): string =>
  v.verified
    ? `verified${v.filter !== undefined ? ` (${filteredWords(v.filter)})` : ""}`
    : `not verified${v.why ? ` (${v.why})` : ""}`;

/** The verdict in a headline's capitals: report.html's banner and title, the job summary's headline, the watch page's cutover line. */
export const verificationHeadline = (v: { verified: boolean; filter?: string | undefined }): string =>
  v.verified ? (v.filter !== undefined ? "VERIFIED (FILTERED)" : "VERIFIED") : "NOT VERIFIED";

/**
 * Whether the cutover is verified, by the one rule on the read model (what the runs that count
 * earned, `cutover.verified`): the report, the watch page's state and the job summary ask it so,
 * with the same arguments.
 */
export function modelVerification(m: CutoverModel): ReturnType<typeof verification> {
  return verification({
    passed: m.cutover.verified !== undefined,
    kinds: m.steps.map((s) => s.kind),
    reversed: m.cutover.verificationReversed,
    stopped: m.windows.at(-1)?.stoppedInCommit,
    filter: m.cutover.verified?.filter,
    failed: m.cutover.verifyFailed,
  });
}

/**
 * The verdict every output says beside how the cutover stands (report.html's banner and title, the
 * job summary's headline, the watch page's runner section and cutover line), or undefined where
 * it is not said: said wherever the destination may take writes, however the run ended (the sync
 * that runs now committed, its commit in doubt, a commit request of it not answered yet, or an
 * instance last seen COMMITTING or COMMITTED), and after a last run that ended ok at the runbook's
 * end (never a bare success); not before, where "NOT VERIFIED" over a run that failed before any
 * commit reads as the verification's failure (the job summary said it where the report did not).
 */
export function verificationShown(
  m: CutoverModel,
): (ReturnType<typeof verification> & { text: string; headline: string }) | undefined {
  const open = Object.values(syncCommits(m).requested?.answers ?? {});
  // a commit of this cutover on record (a request, a fan-out, a run that said so, or a run that
  // continues the cutover from what an earlier journal carried): a fleet read COMMITTED before any
  // is an earlier sync's, and "NOT VERIFIED" over a start refused by fleet-idle there was a verdict
  // on a cutover that sent nothing (an outside review)
  const ownCommit = commitOnRecord(m);
  const mayTakeWrites =
    m.cutover.commitInDoubt !== undefined ||
    open.some((a) => a === "pending" || a === "unknown") ||
    (ownCommit &&
      (m.cutover.committed || m.fleet.instances.some((i) => i.state === "COMMITTING" || i.state === "COMMITTED")));
  const last = m.runs.at(-1);
  if (!mayTakeWrites && !(last?.outcome === "ok" && last.to === undefined)) return undefined;
  const v = modelVerification(m);
  return { ...v, text: verificationText(v), headline: verificationHeadline(v) };
}
