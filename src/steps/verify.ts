/**
 * `verify`: the verification's end, in the documented order (after commit, once the sync is
 * COMMITTED): the run's check (started here if no `startVerification` did), then `writesOff`
 * once, then the verifier's progress until it finishes. Passes only on a result this run earned
 * (service facts): from the process that accepted this run's check and writesOff (no new process
 * seen since), phase `idle` in a generation past the one writesOff was sent in, `error` null,
 * `addedTasks` and `processingTasks` 0, `failedTasks` 0 **and** `metadataMismatchTasks` 0 (index,
 * shard-key and collection-option differences are counted only there). A verifier restarted in
 * the middle is followed (a check to the new process, then writesOff again) a bounded number of
 * times. The protocol rules (one request at a time, nothing resent while it may be in flight, a
 * gone verifier fails fast, restarts) are src/steps/kit/verifier.ts's.
 */
import type { RuleInfo } from "../diagnostics.js";
import type { VerifierProgress } from "../api/index.js";
import { errorMessage } from "../errors.js";
import { instanceLabel } from "../events.js";
import type { VerifyBody } from "../runbook/types.js";
import type { StepContext } from "./kit/context.js";
import { StepFailure, byHand, simulatorWayOn, wayOn } from "./kit/context.js";
import type { StepKindDef } from "./kit/define.js";
import { checkInterlock, stateOrWhyNot } from "./kit/fleet-ops.js";
import { stoppedInCommitInterlock } from "./kit/stopped-in-commit.js";
import { cloneFlow, listStates } from "./kit/sequence.js";
import { abortReason } from "./kit/wait.js";
import {
  askOf,
  awaitResult,
  describeVerifier,
  ensureCheck,
  followRestart,
  newProcess,
  readVerifier,
  refused,
  verifierTools,
  type Restarted,
  type VerifierTools,
} from "./kit/verifier.js";
import { COMMIT_WRITES_FORCED, filteredWords, verifierEarned, WRITES_OFF_FORCED } from "./kit/earned.js";
import { forgetVerification } from "../api/verifier-memory.js";
import {
  VERIFY_AFTER_REVERSE,
  VERIFY_BEFORE_CEA,
  checkAfterReverse,
  checkNeedsCea,
  checkRequests,
} from "./start-verification.js";

/** Lint's `verify-writes-off-early` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const VERIFY_WRITES_OFF_EARLY: RuleInfo = {
  id: "verify-writes-off-early",
  severity: "warning",
  description: "`verify` (which sends writesOff) before writes are sure to be stopped.",
  spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**.",
  source: "service-facts.md",
  hint: "Place verify after stopWrites and commit (the documented order: commit, `waitFor: { state: COMMITTED }`, then verify).",
};

/** Lint's `writes-off-before-commit` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const WRITES_OFF_BEFORE_COMMIT: RuleInfo = {
  id: "writes-off-before-commit",
  severity: "warning",
  description:
    "`verify` sends writesOff where the sync may not be COMMITTED yet: the destination's index metadata still differs by design, so the verification fails on it.",
  spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**. Before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and hidden indexes visible on the destination, so index metadata differs by design until commit.",
  source: "service-facts.md",
  hint: "Start the check early with `startVerification` (during change event application) and move `verify` after the commit and a `waitFor: { state: COMMITTED }`.",
};

type Body = NonNullable<VerifyBody>;

/** facts: "Before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and hidden indexes visible on the destination". */
export const METADATA_BEFORE_COMMIT =
  "before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and hidden indexes visible on the destination, so index metadata differs by design and the verifier counts it in metadataMismatchTasks";

export const verify: StepKindDef<Body> = {
  body: (step) => (step.verify === undefined ? undefined : (step.verify ?? {})),
  title: () => "Verify the destination against the source",
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [VERIFY_BEFORE_CEA, VERIFY_WRITES_OFF_EARLY, WRITES_OFF_BEFORE_COMMIT, VERIFY_AFTER_REVERSE],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: "verifier",
    afterWritesBack: "told",
    usesVerifier: true,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: undefined,
  rehearsal: undefined,
  plan: (b, to) => [
    ...checkRequests(b, to),
    { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until the check runs" },
    ...to.instances.map((target) => ({
      method: "GET" as const,
      target,
      path: "/api/v1/progress",
      note: "read once: the states writesOff meets",
    })),
    {
      method: "POST",
      target: to.verifier,
      path: "/api/v1/writesOff",
      body: {},
      note: "once; never resent (not when already accepted in the run this one resumes)",
    },
    { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until phase idle: the result" },
  ],
  timing: (b) => ({ timeout: b.timeout, pollInterval: b.pollInterval }),
  sequence(_b, at) {
    const f = at.flow;
    if (!f.checkMust) checkNeedsCea(at, "verification");
    checkAfterReverse(at);
    if (!f.writesStopped && at.runbook.writesStoppedExternally !== true)
      at.report(
        VERIFY_WRITES_OFF_EARLY,
        "This verify tells the verifier that writes to the source have stopped (writesOff), and no stopWrites step is sure to have run before it.",
      );
    const committedOnly = [...f.states].every((s) => s === "COMMITTED");
    const commitInRunbook = at.runbook.steps.some((s, j) => "commit" in s && at.runs(j) !== "never");
    if (!committedOnly && (commitInRunbook || !f.states.has("COMMITTED")))
      at.report(
        WRITES_OFF_BEFORE_COMMIT,
        `This verify sends writesOff while the sync can still be ${listStates([...f.states].filter((s) => s !== "COMMITTED"))}: ${METADATA_BEFORE_COMMIT}. The verification then fails on those collections.`,
      );
    const failed = cloneFlow(f);
    failed.verifying = { at: at.index, embedded: false };
    failed.checkMay ??= at.index;
    failed.writesOffMay = true;
    f.checkMay ??= at.index;
    f.checkMust = true;
    f.writesOffMay = true;
    f.writesOffMust = true;
    f.ceaReached = true;
    if (f.verifying && !f.verifying.embedded) f.verifying = undefined;
    return { ok: f, failed };
  },
  async run(ctx, body) {
    const t = verifierTools(ctx, body);
    const m = ctx.run.memory.verifier;
    // no verification can verify this cutover once an instance stopped during the commit:
    // refused before anything is sent to the verifier (exit 3), with the documented way on
    stoppedInCommitInterlock(ctx, VERIFY_HELD);
    // writesOff says writes have stopped: refused before anything is sent when they are not
    if (!m.writesOff || m.writesOff.answered === "error") writesStoppedInterlock(ctx);
    // a verifier that restarts loses the check and writesOff: followed (bounded by followRestart)
    for (;;) {
      await ensureCheck(ctx, t);
      const sent = await writesOff(ctx, t);
      if ("restarted" in sent) {
        followRestart(ctx, t, sent.restarted, sent.why);
        continue;
      }
      const result = await awaitResult(ctx, t);
      if ("restarted" in result) {
        followRestart(ctx, t, result.restarted, result.why);
        continue;
      }
      return judge(ctx, result.finished, sent.states);
    }
  },
};

/** What the verify step's `stopped-in-commit` refusal kept from happening. */
const VERIFY_HELD = "This step took no verification result for this cutover";

/**
 * writesOff, once per verification: not when the run (or the run it resumes) had it accepted, nor
 * when it was sent without an answer (it may have arrived; a second one while it is in flight
 * shuts the verifier down: the verifier finishing shows it arrived). Right before it, one read
 * of the verifier: the generation it meets (a result must come from a later one), and that the
 * process is still the one that runs this check (a new one is a restart: writesOff before its
 * check would panic it). Returns the fleet's states it met, when this step sent it.
 */
async function writesOff(ctx: StepContext, t: VerifierTools): Promise<{ states: string[] | undefined } | Restarted> {
  const m = ctx.run.memory.verifier;
  const earlier = m.writesOff;
  if (earlier && earlier.answered !== "error") {
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "reconcile",
      ok: true,
      reason:
        earlier.answered === "ok"
          ? "writesOff was accepted earlier in this run: not sent again"
          : "writesOff was sent earlier in this run and its answer was lost: not sent again (a second one while it may be in flight shuts the verifier down); the verifier finishing shows it arrived",
    });
    return { states: undefined };
  }
  // after a restart: writes must still be stopped for a second writesOff
  if (t.restarts > 0) writesStoppedInterlock(ctx);
  // the states writesOff meets: before COMMITTED the destination's index metadata differs by design
  const snap = await ctx.run.fleet.progress(ctx.signal);
  const states = snap.instances.map((i) => `${instanceLabel(i.ref)} ${i.progress?.state ?? "unknown"}`);
  const early = snap.instances.filter((i) => i.progress !== undefined && i.progress.state !== "COMMITTED");
  if (early.length > 0)
    ctx.run.emit("log", {
      level: "warn",
      index: ctx.index,
      message: `writesOff before the sync is COMMITTED (${early.map((i) => `${instanceLabel(i.ref)} ${stateOrWhyNot(i)}`).join(", ")}): ${METADATA_BEFORE_COMMIT}`,
    });
  const now = await readVerifier(ctx, t, "the verifier's progress before writesOff");
  const why = newProcess(m, now);
  if (why !== undefined) return { restarted: now, why };
  const generation = m.highestGeneration ?? 0;
  // here only when writes are known stopped or the interlock was forced: the result then verifies nothing
  const forced = !writesKnownStopped(ctx);
  ctx.run.emit("verifier.writesOff", { index: ctx.index, id: ctx.id, generation, ...(forced ? { forced: true } : {}) });
  m.writesOffGeneration = generation;
  if (forced) m.writesOffForced = true;
  else delete m.writesOffForced;
  const at = Date.now();
  const o = await t.v.tryCommand("writesOff", { signal: ctx.signal, timeoutMs: t.requestTimeoutMs });
  m.writesOff = askOf(o, at);
  const met = early.length > 0 ? states : [];
  if (o.ok) return { states: met };
  refused(ctx.run, "writesOff", o.error, earlier);
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: "reconcile",
    ok: true,
    reason: `verifier writesOff: no answer (${errorMessage(o.error)}); not sent again (a second one while it may be in flight shuts the verifier down): the verifier finishing will show it arrived`,
  });
  if (ctx.signal.aborted) throw abortReason(ctx, [], { describe: "the verifier's answer to writesOff" });
  return { states: met };
}

/**
 * The runbook says writes are stopped another way; else, unless this sync's commit was let through
 * by a forced writes-stopped interlock, a stopWrites held or a commit was sent. Fail safe: a commit
 * sent past a forced one says nothing of the writes (before 1.20, or without
 * enableUserWriteBlocking, the service does not block the source's writes after commit), nor does a
 * stop that held before it (the forced refusal may be its `check:` seeing writes flow: a review),
 * and writesOff goes only "after writes on the source have stopped" (the verifier's README
 * workflow). The runbook's declaration is the operator's word, and the way on the refusal names.
 */
function writesKnownStopped(ctx: StepContext): boolean {
  const { memory, runbook } = ctx.run;
  return (
    runbook.writesStoppedExternally === true ||
    (memory.commitWritesForced !== true && (memory.writesStopped || memory.commitSent))
  );
}

/** The way on of a refusal whose hint edits the runbook: `--resume --allow-changed-runbook`, after it. */
const ALLOW_CHANGED = { beforeResume: true, resumeFlags: ["--allow-changed-runbook"] } as const;

/** writesOff tells the verifier that writes to the source have stopped: only when they have. */
function writesStoppedInterlock(ctx: StepContext): void {
  const stopped = writesKnownStopped(ctx);
  const forcedCommit = ctx.run.memory.commitSent && !stopped;
  checkInterlock(
    ctx,
    "writes-stopped",
    stopped,
    stopped
      ? "writes are stopped: the verifier may be told so (writesOff)"
      : forcedCommit
        ? `writesOff tells the verifier that writes have stopped, and ${COMMIT_WRITES_FORCED}`
        : "writesOff tells the verifier that writes have stopped, and no stopWrites step has succeeded in this run",
    forcedCommit
      ? `Stop the application's writes, declare \`writesStoppedExternally: true\` in the runbook, then ${wayOn(ctx.run, { changed: true })}: writesOff goes once they have stopped, and the verifier compares what the commit left. Or ${wayOn(ctx.run, { force: "writes-stopped" })}: this step runs, and the cutover stays not verified.`
      : "Run verify after stopWrites and commit (the documented order), or set `writesStoppedExternally: true` if writes are stopped another way.",
    // the way on edits the runbook: status and the page offer that --resume, not a plain one (refused
    // again). Unforced, no command: where the run stands decides it (a `--from verify` in a folder
    // without the cutover's journals: its --journal-dir; the run's end says which)
    forcedCommit ? ALLOW_CHANGED : undefined,
  );
}

/**
 * The result: this cutover's (earned.ts `verifierEarned`, the one rule conditions, status and the
 * report ask too), failedTasks 0 and metadataMismatchTasks 0.
 */
function judge(ctx: StepContext, p: VerifierProgress, before: string[] | undefined): void {
  const m = ctx.run.memory.verifier;
  // a stop seen while this step ran (its read of the fleet before writesOff): the result is not taken
  stoppedInCommitInterlock(ctx, VERIFY_HELD);
  const standing = verifierEarned(m, p);
  // never "verified" with fewer documents compared for this cutover than a fresh verification's
  // total: only a verification that began at generation 0 for this cutover compared them all
  if (standing.notFromStart) {
    // refused as a resumed verification is (kit/verifier.ts judgeOrigin): it no longer counts, and
    // `--resume` begins a new one (journaled) rather than waiting on this one again
    const why = `${standing.result} (${describeVerifier(p)})`;
    ctx.run.emit("verifier.origin", { index: ctx.index, id: ctx.id, progress: p, ours: false, why });
    forgetVerification(m);
    m.refused = why;
    throw new StepFailure(`not verified: ${why}`, {
      reason: "unsafe",
      beforeResume: true,
      hint: `Nothing is verified for this cutover. ${byHand(ctx.run, "verifier", `Restart the verifier with --clean (it drops the old verification when the check arrives) or on a new metadata database (a new --metaURI or --metaDBName), then ${wayOn(ctx.run)}: this step sends a new check and verifies every document from generation 0.`)}`,
    });
  }
  const why = standing.result;
  if (standing.comparedNothing) {
    const restart = "restart the verifier with --clean (or on a new metadata database)";
    const filtered = m.filter !== undefined;
    throw new StepFailure(`not verified: ${why} (${describeVerifier(p)})`, {
      reason: "unsafe",
      beforeResume: true,
      // the filter is the runbook's: corrected there, the --resume needs the flag (StepFailure.resumeFlags)
      ...(filtered ? { resumeFlags: ["--allow-changed-runbook"] } : {}),
      // (in a rehearsal the filter is corrected alone: the simulator's verifier starts afresh with it)
      hint: filtered
        ? `Nothing is verified for this cutover. Correct the check's \`filter\` in the runbook (or remove it), ${ctx.run.mode === "rehearse" ? "" : `${restart}, `}then ${wayOn(ctx.run, { changed: true })}: this step sends a new check with it.`
        : `Nothing is verified for this cutover. ${byHand(ctx.run, "verifier", `Start the verifier again with --verifyAll (or a --srcNamespace for each collection to verify) and --clean (or on a new metadata database), then ${wayOn(ctx.run)}: this step sends a new check. If the source truly has no collection, there is nothing to verify, and the cutover stays not verified.`)}`,
    });
  }
  if (standing.skippedDdl) {
    throw new StepFailure(`not verified: ${why} (${describeVerifier(p)})`, {
      reason: "unsafe",
      beforeResume: true,
      hint: `Nothing is verified for this cutover${ctx.run.mode === "rehearse" ? `. ${simulatorWayOn("verifier")}` : `: the verifier's log names each DDL event it skipped. With the source's writes and DDL stopped, restart the verifier with --clean (or on a new metadata database) and without --ddlHandling warnMost (DDL during the new check then stops it rather than going unverified), then ${wayOn(ctx.run)}: this step sends a new check, which compares every collection as it is now.`}`,
    });
  }
  if (why === WRITES_OFF_FORCED) {
    // the stop declared already (a run after the edit, the verifier not restarted): its restart
    // and a plain --resume, not the edit again with the flag (a review followed it there)
    const declared = ctx.run.runbook.writesStoppedExternally === true;
    throw new StepFailure(`not verified: ${why} (${describeVerifier(p)})`, {
      reason: "unsafe",
      // said with the --resume it names (status, the page): a plain one is refused again (a review)
      ...(declared ? { beforeResume: true } : ALLOW_CHANGED),
      hint: declared
        ? `Nothing is verified for this cutover. The runbook declares the application's writes stopped (\`writesStoppedExternally: true\`), and this verifier's writesOff went before that: ${byHand(ctx.run, "verifier", `restart the verifier with --clean (or on a new metadata database), then ${wayOn(ctx.run)}: this step sends a new check and writesOff.`)}`
        : `Nothing is verified for this cutover. Stop the application's writes and declare \`writesStoppedExternally: true\` in the runbook (a stopWrites step does not count for a commit sent past a forced writes-stopped interlock), ${ctx.run.mode === "rehearse" ? "" : "restart the verifier with --clean (or on a new metadata database), "}then ${wayOn(ctx.run, { changed: true })}: this step sends a new check and writesOff.`,
    });
  }
  if (why !== undefined)
    throw new StepFailure(`not a verification result: ${why} (${describeVerifier(p)})`, {
      beforeResume: true,
      hint: `Nothing is verified. ${byHand(ctx.run, "verifier", `Read the verifier's log (is it the migration verifier, release v0.2.1?). ${wayOn(ctx.run)} continues this verification (nothing is resent blindly); or restart the verifier with --clean (or on a new metadata database), then ${wayOn(ctx.run)} verifies from the start.`)}`,
    });
  // notEarned made sure both are numbers
  const failed = p.verificationStatus?.failedTasks as number;
  const mismatched = p.verificationStatus?.metadataMismatchTasks as number;
  if (failed > 0 || mismatched > 0) {
    const parts = [
      failed > 0 ? `${failed} failed task(s) (documents differ)` : "",
      mismatched > 0
        ? `${mismatched} metadata mismatch task(s) (indexes, shard keys or collection options differ)`
        : "",
    ].filter(Boolean);
    const early = before !== undefined && before.length > 0;
    throw new StepFailure(`verification found differences: ${parts.join(", ")}; ${describeVerifier(p)}`, {
      hint:
        mismatched > 0 && early
          ? `writesOff reached the verifier before the sync was COMMITTED (${before.join(", ")}): ${METADATA_BEFORE_COMMIT}. Verify after commit (a verify step after \`waitFor: { state: COMMITTED }\`), with a new verifier.`
          : // here failed > 0 or mismatched > 0: no failed task means mismatches only
            failed === 0
            ? "Index, shard-key or collection-option differences: the verifier's /api/v1/nsMismatches lists them. (If writesOff went before the sync was COMMITTED, index metadata differs by design: verify after commit.)"
            : "The destination differs from the source (writes during the sync's commit, DDL during verification, or a fleet error): the verifier's /api/v1/docMismatches and /nsMismatches list the differences. Do not move the application before they are understood.",
    });
  }
  // notEarned made sure it is a number
  const writesOffGeneration = m.writesOffGeneration as number;
  ctx.run.emit("verifier.verified", {
    index: ctx.index,
    id: ctx.id,
    progress: p,
    writesOffGeneration,
    ...(m.filter !== undefined ? { filter: m.filter } : {}),
  });
  m.verified = { at: Date.now(), generation: p.generation as number };
  ctx.run.emit("log", {
    level: "info",
    index: ctx.index,
    message: `verified: ${describeVerifier(p)} (writesOff was sent in generation ${writesOffGeneration})${m.filter !== undefined ? `; ${filteredWords(m.filter)}` : ""}`,
  });
}
