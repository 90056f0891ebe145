/**
 * `commit`: refused, with the reason, unless every instance is RUNNING with canCommit true, a
 * stopWrites succeeded in this run (or the runbook says writes are stopped outside it) and no
 * instance answered with an error; `--force=<check>` names a check to skip. Once sent, nothing
 * is undone.
 */
import type { RuleInfo } from "../diagnostics.js";
import { commandTookEffect } from "../api/index.js";
import { BEHAVIOUR } from "../api/versions.js";
import { instanceLabel } from "../events.js";
import { toEach, type StepKindDef } from "./kit/define.js";
import { StepFailure, byHand, wayOn, type StepContext } from "./kit/context.js";
import { checkIdentity, checkInterlock, readFleet, sendCommand, stateOrWhyNot } from "./kit/fleet-ops.js";
import { commandTargets } from "./kit/targets.js";
import { COMMAND_IMPOSSIBLE_STATE, commandPossible, resultOf } from "./kit/sequence.js";
import { readWrites, writesChecks } from "./kit/writes-check.js";

/** Lint's `commit-twice` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const COMMIT_TWICE: RuleInfo = {
  id: "commit-twice",
  severity: "error",
  description: "A `commit` after another commit (with no reverse between them).",
  spec: "Preconditions: application writes to the source are stopped; state RUNNING and canCommit true. Effect: state goes to COMMITTING, then COMMITTED; continuous sync stops.",
  source: "sync-service-api.md",
  hint: "Commit once; wait for it with `waitFor: { state: COMMITTED }`.",
};

/** Lint's `commit-without-stop-writes` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const COMMIT_WITHOUT_STOP_WRITES: RuleInfo = {
  id: "commit-without-stop-writes",
  severity: "error",
  description:
    "`commit` with no earlier `stopWrites` step that is sure to have succeeded (and no `writesStoppedExternally: true`).",
  spec: "Preconditions: application writes to the source are stopped (reads are still allowed; writes during commit may lose data).",
  source: "sync-service-api.md",
  // Service facts (corrections): from 1.20 the service blocks source writes in its default
  // configuration "once you complete this step" (the commit), so not before it; "Stopping
  // application writes before commit is still the runbook's job (the page's step 2 comes before
  // commit)", and which configuration controls it is not published: a 1.20+ runbook needs its
  // stopWrites too.
  hint: "Add a `stopWrites` step (with an `undo`) before commit, or declare `writesStoppedExternally: true` if writes are stopped outside the runbook.",
};

/** Lint's `commit-without-can-commit-wait` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const COMMIT_WITHOUT_CAN_COMMIT_WAIT: RuleInfo = {
  id: "commit-without-can-commit-wait",
  severity: "error",
  description: "`commit` with no earlier `waitFor` of `canCommit: true` since the sync last (re)started.",
  spec: "The progress endpoint should show state RUNNING and canCommit true before commit is sent.",
  source: "sync-service-api.md",
  hint: "Add `waitFor: { canCommit: true, lagBelow: 5 }` before the commit.",
};

/** Lint's `commit-without-stream-hashing-wait` (the state model), reported by this kind's `sequence`. */
export const COMMIT_WITHOUT_STREAM_HASHING_WAIT: RuleInfo = {
  id: "commit-without-stream-hashing-wait",
  severity: "warning",
  description:
    'A commit on service 1.9–1.16 with the embedded verifier on, and no `waitFor: { verification: { phase: "stream hashing" } }` before it (since the sync last started or resumed): before 1.17 canCommit does not wait for the embedded verifier.',
  spec: "The cutover waits for both `verification` phases in `stream hashing` with their lag near 0 [cutover process]; `canCommit`: from 1.17 false until the embedded verifier is in a state that allows commit.",
  source: "service-facts.md",
  docs: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference/cutover-process/",
  hint: 'Wait for both sides before the write stop and the commit: `waitFor: { canCommit: true, lagBelow: 5, verification: { phase: "stream hashing", lagBelow: 5 } }`; or turn the embedded verifier off in start (`verification: { enabled: false }`) and verify with the migration verifier.',
};

/** The body is `{}`: the spec's "an empty JSON object `{}` must be sent". */
type CommitBody = Record<string, never>;

export const commit: StepKindDef<CommitBody> = {
  body: (step) => (step.commit === undefined ? undefined : {}),
  title: () => "Commit",
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [
    COMMIT_TWICE,
    COMMIT_WITHOUT_STOP_WRITES,
    COMMIT_WITHOUT_CAN_COMMIT_WAIT,
    COMMIT_WITHOUT_STREAM_HASHING_WAIT,
    COMMAND_IMPOSSIBLE_STATE,
  ],
  traits: {
    opensWriteStop: false,
    command: "commit",
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun:
      "a commit that failed or was refused leaves the cutover not committed: going on would end the run ok, exit 0, with nothing committed",
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: undefined,
  rehearsal: undefined,
  plan: (_b, to) => [
    ...toEach(to, "GET", "/api/v1/progress", {
      note: "interlock: RUNNING, canCommit true; writes stopped; no errors",
    }),
    ...toEach(to, "POST", "/api/v1/commit", { body: {} }),
  ],
  sequence(_b, at) {
    const f = at.flow;
    if (f.committed !== undefined) {
      at.report(COMMIT_TWICE, `The sync is already committed by ${at.line(f.committed)}; commit needs state RUNNING.`);
      return { ok: f };
    }
    if (!commandPossible(at, "commit")) return { ok: f };
    if (!f.writesStopped && at.runbook.writesStoppedExternally !== true) {
      const maybe = at.runbook.steps.slice(0, at.index).some((s) => "stopWrites" in s);
      // the documented order: "stop writes to the synced collections on the source (unless write
      // blocking covers it)": dual write blocking (before 1.20, where the option left the start
      // body) makes the service block source writes once commit is sent
      // the index of the start that sets it, or -1
      const blocking = at.atLeast(BEHAVIOUR.writeBlockingFromConfig.since)
        ? -1
        : at.runbook.steps.slice(0, at.index).findIndex((s) => {
            const wb = (s as { start?: { enableUserWriteBlocking?: unknown } }).start?.enableUserWriteBlocking;
            return wb === true || wb === "sourceAndDestination";
          });
      at.report(
        COMMIT_WITHOUT_STOP_WRITES,
        `${
          maybe
            ? "No stopWrites step is sure to have succeeded before this commit (one may be skipped or continue on error); writes during commit may lose data."
            : "No stopWrites step runs before this commit; application writes to the source must be stopped, or data written during commit may be lost."
        } Write blocking that covers the source counts (before 1.20: \`enableUserWriteBlocking: true\` or \`"sourceAndDestination"\` in start, which blocks source writes once commit is sent)${
          blocking >= 0
            ? `, and ${at.line(blocking)} sets it: declare \`writesStoppedExternally: true\` to say writes are stopped that way`
            : ": with it, declare `writesStoppedExternally: true`"
        }.`,
      );
    }
    if (!f.canCommitSeen) {
      at.report(
        COMMIT_WITHOUT_CAN_COMMIT_WAIT,
        "No `waitFor: { canCommit: true }` runs before this commit (since the sync last started or resumed); commit needs RUNNING with canCommit true.",
      );
    }
    // the cutover page's first step (1.9+): "When using the embedded verifier check both the
    // verification.source and the verification.destination … the phase fields should show stream
    // hashing. If the verifier is not in the stream hashing phase, the cutover process might take a
    // long time." From 1.17 canCommit itself waits for the embedded verifier (notes 1.17).
    if (
      f.verifying?.embedded &&
      !f.streamHashingSeen &&
      at.atLeast(BEHAVIOUR.embeddedVerifier.since) &&
      !at.atLeast(BEHAVIOUR.canCommitWaitsForEmbeddedVerifier.since)
    )
      at.report(
        COMMIT_WITHOUT_STREAM_HASHING_WAIT,
        `The embedded verifier may be running (${f.verifying.at >= 0 ? `${at.line(f.verifying.at)} does not turn it off` : "on by default from service 1.9"}), and no \`waitFor: { verification: { phase: "stream hashing" } }\` runs before this commit: on this version canCommit does not wait for it, and a cutover with the verifier not yet in stream hashing "might take a long time".`,
      );
    f.states = resultOf("commit", at.initializing);
    f.committed = at.index;
    f.pendingCommits.add(at.index);
    if (f.verifying?.embedded) f.verifying = undefined;
    return { ok: f };
  },
  async run(ctx) {
    const { memory, runbook } = ctx.run;
    const stopped = memory.writesStopped || runbook.writesStoppedExternally === true;
    checkInterlock(
      ctx,
      "writes-stopped",
      stopped,
      memory.writesStopped
        ? "a stopWrites step of this cutover held, and no undo of it ran since"
        : runbook.writesStoppedExternally
          ? "the runbook declares writes stopped outside it"
          : "no stopWrites step has succeeded in this run: writes during commit may lose data",
      ctx.run.mode === "resume"
        ? "The journal shows no stopWrites that held (a failed one, or one whose undo ran): check the writers, then run the stopWrites step again, or set `writesStoppedExternally: true` if writes are stopped another way."
        : "Run the stopWrites step first (a --from past it skips it), or set `writesStoppedExternally: true` if writes are stopped another way.",
    );
    // a hook process an earlier run left (an undo that outlived its runner, a daemon an undo left)
    // may still turn writes on behind this commit: every one must be known to have exited; where
    // that cannot be known, only the write stop's check (read below) may decide (issue 42)
    const checks = writesChecks(runbook.steps, ctx.index);
    earlierHooksInterlock(ctx, checks.length > 0);
    // the journal says what the run did; the switch says what is true now (a journal restored from
    // a snapshot, an undo that outlived its runner, a person at the switch): read it where it can be
    const seen = await readWrites(ctx, checks);
    if (seen)
      checkInterlock(
        ctx,
        "writes-stopped",
        seen.stopped,
        seen.stopped
          ? `application writes are seen stopped now: ${seen.detail}`
          : `application writes are not seen stopped now: ${seen.detail}`,
        `Stop the application's writes (or find out why the check fails), then ${wayOn(ctx.run)}${ctx.run.mode === "rehearse" ? "" : ", which runs this commit again"}; nothing was sent.`,
      );
    // let through by --force=writes-stopped (either refusal above): sent with writes not known
    // stopped, and so journaled (the forced decision, src/journal/state.ts)
    const writesForced = !stopped || seen?.stopped === false;
    // completing a split commit: the refusals being completed are the reason for it, not a bar to it
    // Stryker disable next-line ArrayDeclaration: equivalent: a name in the list no refusal has forgives nothing
    const forgive = ctx.targets?.forgive ?? [];
    const forgiven = memory.serviceErrors.filter((e) => e.op === "commit" && forgive.includes(e.instance));
    const errors = memory.serviceErrors.filter((e) => !forgiven.includes(e));
    checkInterlock(
      ctx,
      "no-errors",
      errors.length === 0,
      errors.length === 0
        ? forgiven.length
          ? `no instance answered with an error in this run, besides the commit refusals of ${[...new Set(forgiven.map((e) => e.instance))].join(", ")} being completed`
          : "no instance answered with an error in this run"
        : `instances answered with errors earlier: ${errors.map((e) => `${e.op}: ${e.error}`).join("; ")}`,
      // a refusal the instance took back later counts too (src/run/resume-decide.ts): its way on
      // said, and the forced --resume that status and the page offer with it (a plain one is
      // refused again; "rerun with --force" named no command)
      `Find out from the service's log why ${errors.length === 1 ? "it" : "they"} refused. A command refused and taken later (a split \`start\` completed) counts too: nothing published says an instance started after the others leaves the destination a consistent copy, and a commit cannot be undone; the verifier's progress shows differences it found so far. Only if you are certain it is safe: ${wayOn(ctx.run, { force: "no-errors" })}.`,
      { beforeResume: true, resumeFlags: ["--force=no-errors"] },
    );
    // always read now, never reuse the wait's read: an instance that dies or restarts between the
    // two (the fault matrix's "at commit") must be refused here, before anything is sent
    const snap = await readFleet(ctx, undefined, undefined, "commit");
    checkIdentity(ctx, snap);
    const { judged, only } = await commandTargets(ctx, "commit", snap);
    const notReady = judged.filter((i) => !(i.progress?.state === "RUNNING" && i.progress.canCommit === true));
    checkInterlock(
      ctx,
      "can-commit",
      notReady.length === 0,
      notReady.length === 0
        ? `${only ? "every instance it goes to" : "every instance"} is RUNNING with canCommit true`
        : `commit needs every instance RUNNING with canCommit true; ${notReady.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}${i.progress ? ` with canCommit ${String(i.progress.canCommit)}` : ""}`).join(", ")}`,
      "Wait for canCommit (a waitFor step) before commit.",
    );
    const refusedBefore = memory.serviceErrors.length;
    // a commit of this sync sent before (an earlier run's, carried or resumed): this send refused
    // everywhere it went says nothing of that one, which may hold where it was never answered (an
    // outside review: completing a split, refused again, ended "not committed" while the others
    // held the first send in its round). One accepted, or known refused, is told by its own flags.
    const sentBefore = memory.commitSent;
    const to = only ? ctx.run.fleet.refs.filter((r) => only.includes(r.index)) : ctx.run.fleet.refs;
    let r: Awaited<ReturnType<typeof sendCommand>>;
    try {
      r = await sendCommand(ctx, {
        op: "commit",
        body: {},
        only,
        tookEffect: (p) => commandTookEffect("commit", p.state),
        onAccepted: (n) => {
          if (n > 0) memory.commitAccepted = true;
        },
        onSettled: ({ accepted, mayHold }) => {
          if (accepted === 0 && mayHold === 0 && !sentBefore) memory.commitRefused = true;
        },
        beforeSend: () => {
          // from here on nothing is undone: writes may already be going to the destination
          memory.commitSent = true;
          // never cleared by a later send: the writes that flowed during this one stay unverified
          if (writesForced) memory.commitWritesForced = true;
          ctx.run.plugins.undo.disarm();
        },
      });
    } catch (err) {
      throw splitFailure(ctx, err, to.length, refusedBefore);
    }
    // a split this step completed is whole again
    delete memory.split;
    ctx.run.emit("commit.sent", {
      index: ctx.index,
      id: ctx.id,
      instances: to.map(instanceLabel),
      skewMs: r.skewMs,
    });
  },
};

/**
 * The `hook-processes` interlock: no process an earlier run of this cutover started may still
 * run (src/run/orphans.ts judges them: by token, journaled pid and start time, process group and
 * session). Where that cannot be known (another host, another PID namespace, no /proc, a process
 * of this user whose environment cannot be read), a `check:` of the write stop decides (it reads
 * the switch right after this); without one, commit is refused with what to check.
 */
function earlierHooksInterlock(ctx: StepContext, hasCheck: boolean): void {
  const gate = ctx.run.earlierHooks;
  if (!gate) return;
  const { live, unknown } = gate.judge();
  // the --resume, whatever this run was: a plain run or `--new-cutover` run again would begin yet
  // another cutover, and a `--from` again would repeat the steps before this one (a review)
  if (live.length) {
    checkInterlock(
      ctx,
      "hook-processes",
      false,
      `${live.join("; ")} ${live.length === 1 ? "was" : "were"} started by an earlier run and ${live.length === 1 ? "is" : "are"} still running: ${live.length === 1 ? "it" : "they"} may turn application writes back on behind this commit`,
      `Wait for ${live.length === 1 ? "it" : "them"} to exit, or stop ${live.length === 1 ? "it" : "them"} and check what ${live.length === 1 ? "it" : "they"} did to the application's writes, then ${wayOn(ctx.run)}; nothing was sent.`,
      { beforeResume: true },
    );
    return;
  }
  if (unknown.length === 0) {
    checkInterlock(ctx, "hook-processes", true, "every hook process an earlier run started has exited");
    return;
  }
  const what = `the processes earlier runs started cannot all be known to have exited (${unknown.join("; ")})`;
  if (hasCheck) {
    checkInterlock(
      ctx,
      "hook-processes",
      true,
      `${what}; the write stop's check reads the write switch right before this commit and decides`,
    );
    return;
  }
  checkInterlock(
    ctx,
    "hook-processes",
    false,
    `${what}: one may still turn application writes back on behind this commit, and no stopWrites here has a \`check:\` to read the write switch`,
    `Check where it ran that no process of it is left (on that host, in that PID namespace: \`ps -eo pid,lstart,args\`, or the token in its environment, SYNCBOOK_HOOK_TOKEN), and that the application's writes are stopped; then ${wayOn(ctx.run, { force: "hook-processes" })}. A \`check:\` on the stopWrites step lets the runner read the switch itself.`,
    // what stays unknowable is refused again by a plain --resume (a review): status and the page
    // offer the forced one, said with this hint, as the stopped-in-commit refusal's forced resume is
    { beforeResume: true, resumeFlags: ["--force=hook-processes"] },
  );
}

/**
 * A commit some instances refused while the others took it (or wait for the rest: commit blocks
 * until every instance has it) is a split fleet: said as such, with the way out. `--resume`
 * completes it (journal/reconcile.ts): commit to the refusing instances only, once they are
 * RUNNING with canCommit true, never again to the others.
 */
function splitFailure(ctx: StepContext, err: unknown, sentTo: number, refusedBefore: number): unknown {
  // the errors this send recorded: commit refusals only
  const refused = ctx.run.memory.serviceErrors.slice(refusedBefore);
  const names = [...new Set(refused.map((e) => e.instance))];
  if (!(err instanceof StepFailure) || names.length === 0) return err;
  const why = refused.map((e) => `${e.instance}: ${e.error}`).join("; ");
  const hint = byHand(
    ctx.run,
    "fleet",
    `Find out why ${names.join(", ")} refused and fix it (the other instances hold the commit: do not send it to them again). Then ${wayOn(ctx.run)} completes it: it sends commit to ${names.length === 1 ? "that instance" : "those instances"} only, once RUNNING with canCommit true, after you confirm.`,
  );
  const earlier = ctx.run.memory.split;
  if (names.length >= sentTo) {
    // a completion refused again: the instances that held the commit before still hold it
    if (!earlier || !ctx.targets) return err;
    return new StepFailure(
      `split: ${earlier}: ${names.join(", ")} refused it again (${why}); nothing took effect on ${names.length === 1 ? "it" : "them"}, and the other instances still hold the commit; nothing was resent`,
      {
        reason: err.reason,
        beforeResume: true,
        hint,
      },
    );
  }
  ctx.run.memory.split = `commit reached ${sentTo - names.length} of ${sentTo} instances (refused by ${names.join(", ")})`;
  // one paragraph: the refusals, then what the others do; each instance's answer (or its lack) is
  // in the fan-out's lines above, not repeated here
  return new StepFailure(
    `split: ${ctx.run.memory.split}: ${why}; commit blocks until every instance has it, so the instances that took it hold it until ${names.join(", ")} ${names.length === 1 ? "has" : "have"} it; nothing was resent`,
    {
      reason: err.reason,
      beforeResume: true,
      hint,
    },
  );
}
