/** `start`: every instance must be IDLE; the identical body goes to every instance once. */
import type { RuleInfo } from "../diagnostics.js";
import { commandTookEffect } from "../api/index.js";
import { wireStartBody } from "../api/start-body.js";
import { BEHAVIOUR, atLeast, versionDependentParts } from "../api/versions.js";
import { instanceLabel } from "../events.js";
import type { StartRequest } from "../runbook/types.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { checkIdentity, checkInterlock, readFleet, sendCommand, stateOrWhyNot } from "./kit/fleet-ops.js";
import { poll } from "./kit/poll.js";
import { COMMAND_IMPOSSIBLE_STATE, commandPossible, resultOf, shardedWithoutEmbedded } from "./kit/sequence.js";
import { byHand, wayOn, type RunContext, type StepContext, type WayOnRun } from "./kit/context.js";
import type { FleetSnapshot, InstanceSample } from "../fleet/index.js";
import { commandTargets } from "./kit/targets.js";
import { redactLeaves } from "../redact.js";

/** Lint's `start-not-first` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const START_NOT_FIRST: RuleInfo = {
  id: "start-not-first",
  severity: "error",
  description:
    "`start` comes after another sync command (commit, pause, resume, reverse), so the fleet cannot be IDLE.",
  spec: "start is allowed only in IDLE.",
  source: "sync-service-api.md",
  hint: "Put `start` before every other command, or split the runbook: one that starts the sync, one for the cutover.",
};

/** Lint's `start-twice` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const START_TWICE: RuleInfo = {
  id: "start-twice",
  severity: "error",
  description: "A second `start` after the sync was started.",
  spec: "Start fails when the service is not in state IDLE.",
  source: "sync-service-api.md",
  hint: "Remove the second start: a running sync is never started again (to add a database, restart the sync from the beginning in a new runbook).",
};

export const start: StepKindDef<StartRequest> = {
  body: keyed("start"),
  title: (b) => `Start the sync ${b.source} → ${b.destination}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [START_TWICE, START_NOT_FIRST, COMMAND_IMPOSSIBLE_STATE],
  traits: {
    opensWriteStop: false,
    command: "start",
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun:
      "a start that failed may have reached some instances and not others: every later step would act on a fleet in doubt",
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: (b) => b,
  rehearsal: undefined,
  plan: (b, to) => {
    const v = to.serviceVersion;
    const parts = versionDependentParts(b).map((p) => p.text);
    const initializing = v === undefined || atLeast(v, BEHAVIOUR.initializing.since);
    return [
      ...toEach(to, "GET", "/api/v1/progress", {
        note: `interlock: every instance IDLE${initializing ? " (INITIALIZING, 1.20+, is waited out)" : ""}`,
      }),
      // the body as sent: x-passthrough fields at the top level, where the service reads them
      ...toEach(to, "POST", "/api/v1/start", {
        body: redactLeaves(wireStartBody(b), (s) => to.redact(s)),
        ...(parts.length
          ? { note: `${v === undefined ? "no serviceVersion" : `service ${v}`}: ${parts.join("; ")}` }
          : {}),
      }),
    ];
  },
  sequence(b, at) {
    const f = at.flow;
    const started = resultOf("start", at.initializing);
    if (f.starts.length > 0) {
      at.report(START_TWICE, `The sync is already started by ${at.line(f.starts[0]!)}; start is allowed only in IDLE.`);
      return { ok: f };
    }
    if (f.firstCommand !== undefined) {
      at.report(START_NOT_FIRST, `start is allowed only in IDLE, and ${at.line(f.firstCommand)} runs before it.`);
      f.starts = [at.index];
      f.states = started;
      return { ok: f };
    }
    f.starts = [at.index];
    // before the first command lint's model is IDLE whenever the runbook has a start, so this first
    // start is always possible: the call reports it should a model ever say otherwise
    commandPossible(at, "start");
    // the embedded verifier (1.9+, on unless the start turns it off; before 1.10 not with a
    // sharded cluster) checks until commit
    const embedded =
      !shardedWithoutEmbedded(b, at) &&
      (b.verification?.enabled === true ||
        (b.verification?.enabled !== false && at.atLeast(BEHAVIOUR.embeddedVerifier.since)));
    f.states = started;
    f.canCommitSeen = false;
    f.streamHashingSeen = false;
    f.ceaReached = false;
    f.committed = undefined;
    if (embedded) f.verifying = { at: at.index, embedded: true };
    return { ok: f };
  },
  async run(ctx, body) {
    const snap = await idleOrInitializing(ctx);
    // fleet-identity first, then fleet-idle, on the same read: a refusal by identity says what
    // fleet-idle finds there too, whose refusal its way on would meet next (a review: a
    // --new-cutover on a fleet that ran the earlier cutover's sync was pointed at --new-cutover
    // again). Words only: the interlocks keep their order, and neither sends anything.
    checkIdentity(ctx, snap, notIdleToo(ctx, snap));
    const { judged, only } = await commandTargets(ctx, "start", snap);
    const notIdle = judged.filter((i) => i.progress?.state !== "IDLE");
    checkInterlock(
      ctx,
      "fleet-idle",
      notIdle.length === 0,
      notIdle.length === 0
        ? "every instance is IDLE"
        : `start is allowed only in IDLE; ${notIdle.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`).join(", ")}`,
      notIdleHint(ctx.run, notIdle),
    );
    // from now on every read must show this direction (fleet identity, issue 12 item 2)
    ctx.run.memory.identity.direction = {
      source: body.source,
      destination: body.destination,
      from: `the start step ${ctx.id}`,
    };
    await sendCommand(ctx, {
      op: "start",
      body: wireStartBody(body),
      only,
      tookEffect: (p) => commandTookEffect("start", p.state),
    });
  },
};

/** States a sync never leaves for IDLE: committed (or on its way), or reversed after it. */
const PAST_COMMIT = new Set<string | undefined>(["COMMITTING", "COMMITTED", "REVERSING"]);

/**
 * The way on from a fleet that is not IDLE, by what it shows. A committed sync does not go back to
 * IDLE (a restarted service "returns to the state it had before the crash", service facts), so
 * --resume, which would send the same start to the same fleet, is no way on there. A `--resume`
 * adopts a run only where a journal of this cutover acted (`RunMemory.acted`): before, it is
 * refused for want of one, so it is not offered (a review: offered on a first run's refusal).
 */
function notIdleHint(run: WayOnRun & Pick<RunContext, "memory">, notIdle: readonly InstanceSample[]): string {
  const past = notIdle.filter((i) => PAST_COMMIT.has(i.progress?.state));
  // the simulator of a rehearsal starts IDLE: what else it shows is the rehearsal's own doing
  if (past.length > 0)
    return byHand(
      run,
      "fleet",
      `${past.map((i) => instanceLabel(i.ref)).join(", ")} already committed a sync, and a committed sync does not go back to IDLE: if this runbook's cutover is done, there is nothing to run again (syncbook status shows what its journal did); a new sync needs a service that is IDLE.`,
    );
  return byHand(
    run,
    "fleet",
    `A sync already runs${run.memory.acted ? ` (${wayOn(run)} adopts a run this tool started)` : ""}, or an instance is down.`,
  );
}

/**
 * What the fleet-idle interlock, asked after fleet-identity, finds on the same read, for a
 * fleet-identity refusal to say (its way on, the run's command again, a `--new-cutover` or a
 * `--resume`, meets that interlock next): the instances the start goes to (the targeted ones of a
 * completion) that are not IDLE, and the way on from that; none when each is IDLE. The instance not
 * IDLE may be the one listed by mistake (a correct list drops it): said so. None in a rehearsal,
 * whose simulator starts IDLE and whose hint names no command.
 */
function notIdleToo(ctx: StepContext, snap: FleetSnapshot): string | undefined {
  if (ctx.run.mode === "rehearse") return undefined;
  const only = ctx.targets?.only;
  const notIdle = snap.instances.filter(
    (i) => (only === undefined || only.includes(i.ref.index)) && i.progress?.state !== "IDLE",
  );
  if (notIdle.length === 0) return undefined;
  return `Start also needs every instance IDLE (fleet-idle, checked after this), and ${notIdle.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`).join(", ")}: while an instance of this sync is not IDLE, that check refuses the way on above too. ${notIdleHint(ctx.run, notIdle)}`;
}

/**
 * The fleet, once no instance is INITIALIZING any more. INITIALIZING (1.20+) is "not ready for
 * /start" and passes by itself (to IDLE): a fleet that is only IDLE or INITIALIZING (services just
 * started) is read again until it is IDLE, within the step's time limit, instead of refused.
 * Any other state goes to the interlock as it is.
 */
async function idleOrInitializing(ctx: StepContext): Promise<FleetSnapshot> {
  const first = await readFleet(ctx, undefined, false, "start");
  const initializing = (snap: FleetSnapshot) => snap.instances.filter((i) => i.progress?.state === "INITIALIZING");
  const waitable = (snap: FleetSnapshot) =>
    initializing(snap).length > 0 &&
    snap.instances.every((i) => i.progress?.state === "IDLE" || i.progress?.state === "INITIALIZING");
  if (!waitable(first)) return first;
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: "retry",
    ok: true,
    reason: `${initializing(first)
      .map((i) => instanceLabel(i.ref))
      .join(", ")} INITIALIZING (not ready for start yet): reading progress until every instance is IDLE`,
  });
  const r = await poll({
    read: () => readFleet(ctx, undefined, false, "start"),
    judge: (snap) => (waitable(snap) ? undefined : snap),
    every: ctx.pollMs,
    signal: ctx.signal,
  });
  return r.value;
}
