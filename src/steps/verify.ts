/**
 * `verify`: waits until every instance is in change event application (or already committing),
 * starts the verifier's check, tells it writes are off if asked, and polls it until `idle`.
 * Fails with the counters when failedTasks > 0 or the verifier reports an error. An `idle` is a
 * result only once the verifier has moved since this step began (a phase other than idle, or
 * other counters). Idle with the counters from before proves nothing: the real verifier answers
 * `check` at once and starts it later, ignores a check while one runs, and goes straight back to
 * idle with its old counters when asked to check again after finishing. So the step waits for
 * movement (saying so) and fails at its timeout rather than pass on such an idle.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ServiceError, type VerifierClient, type VerifierProgress } from "../api/index.js";
import { durationOr } from "../runbook/index.js";
import { StepFailure, type StepContext } from "../run/context.js";
import { checkInterlock, instanceName } from "../run/fleet-ops.js";
import { abortReason, waitUntil } from "../run/wait.js";
import { errorMessage } from "../errors.js";

const CEA = "change event application";
/** Polls of an unchanged idle verifier before the step says it is waiting for movement. */
const STILL_POLLS = 3;
const STILL =
  "An idle verifier that never moves either has not started the check yet, or finished one before this step could see it (a check over little data, or an earlier check: the verifier does not run a second one). Restart the verifier and run this step again.";

export async function run(ctx: StepContext): Promise<void> {
  const body = ctx.step.verify ?? {};
  const verifier = ctx.run.verifier;
  if (!verifier)
    throw new StepFailure("verify needs the runbook's `verifier:` URL", {
      hint: "Add `verifier: http://host:port` (the verifier's own port, e.g. 27020).",
    });
  const d = ctx.run.defaults;
  const pollMs = body.pollInterval === undefined ? d.pollMs : d.scale(durationOr(body.pollInterval, d.pollMs));
  await waitUntil(ctx, {
    pollMs,
    slowAfterMs: d.slowAfterMs,
    describe: "change event application on every instance",
    evaluate: (snap) => {
      const failing = snap.instances
        .filter(
          (i) =>
            !(
              i.progress &&
              (i.progress.info === CEA ||
                i.progress.canCommit === true ||
                i.progress.state === "COMMITTING" ||
                i.progress.state === "COMMITTED")
            ),
        )
        .map((i) => ({
          instance: instanceName(i.ref),
          condition: `info ${CEA}`,
          value: i.progress ? (i.progress.info ?? i.progress.state) : (i.error?.message ?? "unreachable"),
        }));
      return { met: failing.length === 0, failing };
    },
  });
  // what the verifier showed before this step asked anything: a result is only a result if
  // something moved since (an idle verifier with an earlier check's counters proves nothing)
  // (read until it answers: without it an earlier check's counters would look like movement)
  const baseline = JSON.stringify((await readBaseline(ctx, verifier, pollMs)).verificationStatus ?? null);
  if (body.startCheck !== false) await command(ctx, "check", baseline);
  if (body.writesOff) {
    const stopped =
      ctx.run.memory.writesStopped || ctx.run.runbook.writesStoppedExternally === true || ctx.run.memory.commitSent;
    checkInterlock(
      ctx,
      "writes-stopped",
      stopped,
      stopped
        ? "writes are stopped: the verifier may be told so (writesOff)"
        : "writesOff tells the verifier that writes have stopped, and no stopWrites step has succeeded in this run",
    );
    await command(ctx, "writesOff", baseline);
  }
  let worked = false;
  let unchangedPolls = 0;
  let last: VerifierProgress | undefined;
  for (;;) {
    const started = Date.now();
    try {
      last = await verifier.progress({ signal: ctx.signal });
      ctx.run.emit("verifier.sampled", { progress: last });
    } catch (err) {
      if (ctx.signal.aborted) throw abortReason(ctx, [], { describe: "the verifier to finish" });
      ctx.run.emit("log", {
        level: "warn",
        index: ctx.index,
        message: `verifier progress: ${errorMessage(err)}; retrying`,
      });
    }
    if (last) {
      const s = last.verificationStatus;
      if (last.error !== null && last.error !== undefined)
        throw new StepFailure(`the verifier failed: ${JSON.stringify(last.error)}`, {
          hint: "The verifier itself failed (not a data mismatch): see its log, then verify again.",
        });
      if (s && (s.failedTasks ?? 0) > 0)
        throw new StepFailure(`verification found inconsistencies: ${counters(last)}`, {
          hint: "Do not commit: the destination differs from the source (writes during the sync or commit, or DDL during verification).",
        });
      if (last.phase !== "idle" || JSON.stringify(s ?? null) !== baseline) worked = true;
      else if (!worked && ++unchangedPolls === STILL_POLLS) {
        ctx.run.emit("log", {
          level: "warn",
          index: ctx.index,
          message: `the verifier is idle with the counters it had before this step (${counters(last)}): waiting for it to move. ${STILL}`,
        });
      }
      if (last.phase === "idle" && worked) {
        ctx.run.emit("log", { level: "info", index: ctx.index, message: `verified: ${counters(last)}` });
        return;
      }
    }
    try {
      await sleep(Math.max(0, pollMs - (Date.now() - started)), undefined, { signal: ctx.signal });
    } catch {
      const failure = abortReason(
        ctx,
        [
          {
            instance: "verifier",
            condition: worked ? "phase idle" : "phase idle, after moving since the step began",
            value: last?.phase,
          },
        ],
        { describe: "the verifier to finish" },
      );
      if (!worked && failure instanceof StepFailure)
        throw new StepFailure(`${failure.message}; it never moved, so there is no result to trust`, {
          reason: failure.reason,
          hint: STILL,
        });
      throw failure;
    }
  }
}

async function readBaseline(ctx: StepContext, verifier: VerifierClient, pollMs: number): Promise<VerifierProgress> {
  for (;;) {
    try {
      const p = await verifier.progress({ signal: ctx.signal });
      ctx.run.emit("verifier.sampled", { progress: p });
      return p;
    } catch (err) {
      if (ctx.signal.aborted) throw abortReason(ctx, [], { describe: "the verifier's progress before its check" });
      ctx.run.emit("log", {
        level: "warn",
        index: ctx.index,
        message: `verifier progress (before the check): ${errorMessage(err)}; retrying`,
      });
    }
    try {
      await sleep(pollMs, undefined, { signal: ctx.signal });
    } catch {
      throw abortReason(ctx, [{ instance: "verifier", condition: "progress readable", value: "failing" }], {
        describe: "the verifier's progress before its check",
      });
    }
  }
}

function counters(p: VerifierProgress): string {
  const s = p.verificationStatus;
  if (!s) return `phase ${p.phase}`;
  return `phase ${p.phase}, ${Object.entries(s)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(", ")}`;
}

/**
 * `check` and `writesOff` to the verifier. Not retried blindly either: after a lost answer,
 * `writesOff` (idempotent) is sent again, and `check` only when the verifier's progress shows no
 * check running (a second check would be refused as "already in progress").
 */
async function command(ctx: StepContext, op: "check" | "writesOff", baseline: string): Promise<void> {
  const v = ctx.run.verifier;
  if (!v) return;
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await (op === "check" ? v.check({ signal: ctx.signal }) : v.writesOff({ signal: ctx.signal }));
      return;
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      lastError = err;
      if (err instanceof ServiceError) {
        // our own earlier check, whose answer was lost, is running: that is what we asked for
        if (op === "check" && attempt > 0) return;
        break;
      }
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "reconcile",
        ok: true,
        reason: `verifier ${op}: no answer (${errorMessage(err)}); reading its progress before sending it again`,
      });
      await sleep(250 * 2 ** attempt, undefined, { signal: ctx.signal });
      if (op === "check") {
        // took effect only if the verifier moved since the step began: counters left by an
        // earlier check prove nothing
        const p = await v.progress({ signal: ctx.signal }).catch(() => undefined);
        if (p && (p.phase !== "idle" || JSON.stringify(p.verificationStatus ?? null) !== baseline)) {
          ctx.run.emit("decision", {
            index: ctx.index,
            id: ctx.id,
            kind: "reconcile",
            ok: true,
            reason: `verifier check took effect (phase ${p.phase}): not sent again`,
          });
          return;
        }
      }
    }
  }
  throw new StepFailure(`verifier ${op}: ${errorMessage(lastError)}`, {
    hint: "Is the verifier running at the runbook's `verifier:` URL?",
  });
}
