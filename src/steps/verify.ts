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
import { errorMessage } from "../errors.js";
import { instanceLabel } from "../events.js";
import type { VerifyBody } from "../runbook/types.js";
import { StepFailure, type StepContext } from "./kit/context.js";
import type { StepKindDef } from "./kit/define.js";
import { toEach } from "./kit/define.js";
import { checkInterlock } from "./kit/fleet-ops.js";
import { poll } from "./kit/poll.js";
import { cloneFlow } from "./kit/sequence.js";
import { abortReason, waitUntil } from "./kit/wait.js";
import { RECHECK_WARN_MS, watchRechecks, writingInstances } from "./kit/rechecks.js";
import type { FleetSnapshot } from "../fleet/index.js";

type Body = NonNullable<VerifyBody>;

const CEA = "change event application";
/** Polls of an unchanged idle verifier before the step says it is waiting for movement. */
const STILL_POLLS = 3;
const STILL =
  "An idle verifier that never moves either has not started the check yet, or finished one before this step could see it (a check over little data, or an earlier check: the verifier does not run a second one). Restart the verifier and run this step again.";

export const verify: StepKindDef<Body> = {
  body: (step) => (step.verify === undefined ? undefined : (step.verify ?? {})),
  title: () => "Verify the destination against the source",
  plan: (b, to) => [
    ...toEach(to, "GET", "/api/v1/progress", { note: "polled until change event application" }),
    ...(b.startCheck !== false
      ? [{ method: "POST" as const, target: to.verifier, path: "/api/v1/check", body: {} }]
      : []),
    ...(b.writesOff ? [{ method: "POST" as const, target: to.verifier, path: "/api/v1/writesOff", body: {} }] : []),
    { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until phase idle" },
  ],
  timing: (b) => ({ timeout: b.timeout, pollInterval: b.pollInterval }),
  sequence(b, at) {
    const f = at.flow;
    const states = f.states;
    if (states.size > 0 && [...states].every((s) => s === "IDLE")) {
      at.report(
        "verify-before-cea",
        "No sync is running here (the fleet is IDLE until start), so change event application is never reached and verification cannot begin.",
      );
    } else if (!f.ceaReached && states.has("PAUSED") && [...states].every((s) => s === "PAUSED" || s === "IDLE")) {
      at.report(
        "verify-before-cea",
        "The sync is paused here and has not been seen in change event application: it cannot reach it until resumed.",
      );
    }
    if (b.writesOff === true && !f.writesStopped && at.runbook.writesStoppedExternally !== true) {
      at.report(
        "verify-writes-off-early",
        "writesOff tells the verifier that writes to the source have stopped, and no stopWrites step is sure to have run before this verify.",
        ["writesOff"],
      );
    }
    if (b.startCheck !== false && b.writesOff !== true && at.step.continueOnError !== true) {
      at.report(
        "verify-without-writes-off",
        "This verify starts the verifier's check but never tells it that writes have stopped (`writesOff`), so the verifier keeps rechecking and the step waits until its timeout.",
      );
    }
    const failed = cloneFlow(f);
    failed.verifying ??= { at: at.index, embedded: false };
    f.ceaReached = true;
    if (f.verifying && !f.verifying.embedded) f.verifying = undefined;
    return { ok: f, failed };
  },
  async run(ctx, body) {
    const verifier = ctx.run.verifier;
    if (!verifier)
      throw new StepFailure("verify needs the runbook's `verifier:` URL", {
        hint: "Add `verifier: http://host:port` (the verifier's own port, e.g. 27020).",
      });
    const pollMs = ctx.pollMs;
    await waitUntil(ctx, {
      pollMs,
      slowAfterMs: ctx.slowAfterMs,
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
            instance: instanceLabel(i.ref),
            condition: `info ${CEA}`,
            value: i.progress ? (i.progress.info ?? i.progress.state) : (i.error?.message ?? "unreachable"),
          }));
        return { met: failing.length === 0, failing };
      },
    });
    // what the verifier showed before this step asked anything: a result is only a result if
    // something moved since (an idle verifier with an earlier check's counters proves nothing)
    // (read until it answers: without it an earlier check's counters would look like movement)
    const baseline = JSON.stringify((await readBaseline(ctx, verifier)).verificationStatus ?? null);
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
    // minutes of rechecking are said while there is time, naming the instances that hint at writes
    const rechecks = watchRechecks(ctx.run.defaults.scale(RECHECK_WARN_MS));
    let fleetBefore: FleetSnapshot | undefined;
    const sayRechecks = async (message: string, signal: AbortSignal): Promise<void> => {
      const snap = await ctx.run.fleet.progress(signal).catch(() => undefined);
      const hint = snap ? writingInstances(fleetBefore, snap) : [];
      if (snap) fleetBefore = snap;
      ctx.run.emit("log", {
        level: "warn",
        index: ctx.index,
        message: `${message}${hint.length ? `; instances that still see changes: ${hint.join(", ")}` : ""}`,
      });
    };
    let last: VerifierProgress | undefined;
    try {
      await poll({
        read: async (signal) => {
          try {
            const p = await verifier.progress({ signal });
            ctx.run.emit("verifier.sampled", { progress: p });
            const recheck = rechecks.observe(p);
            if (recheck) await sayRechecks(recheck, signal);
            return p;
          } catch (err) {
            if (signal.aborted) throw err;
            ctx.run.emit("log", {
              level: "warn",
              index: ctx.index,
              message: `verifier progress: ${errorMessage(err)}; retrying`,
            });
            return undefined;
          }
        },
        judge: (p) => {
          if (!p) return undefined;
          last = p;
          const s = p.verificationStatus;
          if (p.error !== null && p.error !== undefined)
            throw new StepFailure(`the verifier failed: ${JSON.stringify(p.error)}`, {
              hint: "The verifier itself failed (not a data mismatch): see its log, then verify again.",
            });
          if (s && (s.failedTasks ?? 0) > 0)
            throw new StepFailure(`verification found inconsistencies: ${counters(p)}`, {
              hint: "Do not commit: the destination differs from the source (writes during the sync or commit, or DDL during verification).",
            });
          if (p.phase !== "idle" || JSON.stringify(s ?? null) !== baseline) worked = true;
          else if (!worked && ++unchangedPolls === STILL_POLLS) {
            ctx.run.emit("log", {
              level: "warn",
              index: ctx.index,
              message: `the verifier is idle with the counters it had before this step (${counters(p)}): waiting for it to move. ${STILL}`,
            });
          }
          if (p.phase === "idle" && worked) {
            ctx.run.emit("log", { level: "info", index: ctx.index, message: `verified: ${counters(p)}` });
            return true;
          }
          return undefined;
        },
        every: pollMs,
        signal: ctx.signal,
      });
    } catch (err) {
      if (!ctx.signal.aborted) throw err;
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
  },
};

/** The verifier's progress before this step asks anything, read until it answers. */
async function readBaseline(ctx: StepContext, verifier: VerifierClient): Promise<VerifierProgress> {
  try {
    const r = await poll({
      read: async (signal) => {
        try {
          const p = await verifier.progress({ signal });
          ctx.run.emit("verifier.sampled", { progress: p });
          return p;
        } catch (err) {
          if (signal.aborted) throw err;
          ctx.run.emit("log", {
            level: "warn",
            index: ctx.index,
            message: `verifier progress (before the check): ${errorMessage(err)}; retrying`,
          });
          return undefined;
        }
      },
      judge: (p) => p,
      every: ctx.pollMs,
      signal: ctx.signal,
    });
    if (!r.done) throw new Error("unreachable: a poll without giveUpMs always ends with a result");
    return r.result;
  } catch (err) {
    if (!ctx.signal.aborted) throw err;
    throw abortReason(ctx, [{ instance: "verifier", condition: "progress readable", value: "failing" }], {
      describe: "the verifier's progress before its check",
    });
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
