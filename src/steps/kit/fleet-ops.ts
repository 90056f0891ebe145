/**
 * Fleet operations with the runner's safety rules:
 * - `readFleet`: progress from every instance, retried with backoff and jitter for the instances
 *   that fail (progress may fail for minutes after a resume; it is safe to retry);
 * - `sendCommand`: one identical command to every instance, never blindly retried: after a
 *   transport error the runner reads progress to learn whether it took effect, and sends it
 *   again only to an instance whose progress proves it did not;
 * - `observeIdentity` / `checkIdentity`: every progress read is checked for fleet identity, and
 *   no command goes to instances that are not, or were not, one fleet in this run;
 * - `checkInterlock`: a named check that refuses the step unless `--force` names it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ServiceError, TransportError, type ApiError, type CommandOperation, type Progress } from "../../api/index.js";
import { instanceLabel, type InstanceRef } from "../../events.js";
import { clusterName, type FleetSnapshot, type InstanceSample } from "../../fleet/index.js";
import { StepFailure, type RunContext, type StepContext } from "./context.js";
import { backoff, poll } from "./poll.js";

/** The commands the runner sends (the service's, from src/api/commands.ts). */
export type CommandOp = CommandOperation;

/** Reads every instance; instances that fail are read again with backoff until `giveUpMs`. */
export async function readFleet(
  ctx: StepContext,
  giveUpMs = ctx.run.defaults.progressGiveUpMs,
): Promise<FleetSnapshot> {
  const delay = backoff(250, 10_000);
  let failing: InstanceSample[] = [];
  const r = await poll({
    read: (signal) => ctx.run.fleet.progress(signal),
    judge: (snap) => {
      failing = snap.instances.filter((i) => i.error);
      return failing.length === 0 ? snap : undefined;
    },
    every: (round) => {
      const ms = delay(round);
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "retry",
        ok: true,
        reason: `progress failing on ${failing.map((f) => `${instanceLabel(f.ref)} (${short(f.error)})`).join(", ")}; retrying in ${Math.round(ms)} ms (progress is safe to retry and may fail for minutes after a resume)`,
      });
      return ms;
    },
    giveUpMs,
    signal: ctx.signal,
  });
  return r.value;
}

export function short(err: ApiError | undefined): string {
  if (!err) return "";
  const m = err.message;
  return m.length > 160 ? `${m.slice(0, 157)}…` : m;
}

/** A named interlock: ok, or refused with the reason unless forced. Emits the decision either way. */
export function checkInterlock(ctx: StepContext, check: string, ok: boolean, reason: string, hint?: string): void {
  const forced = !ok && ctx.run.force.has(check);
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: forced ? "force" : "interlock",
    ok: ok || forced,
    check,
    reason: forced ? `${reason} — overridden by --force=${check}` : reason,
  });
  if (!ok && !forced) {
    throw new StepFailure(`refused (${check}): ${reason}`, {
      reason: "interlock",
      hint: hint ?? `Fix the cause; only if you are certain it is safe, rerun with --force=${check}.`,
    });
  }
}

// ---- fleet identity -------------------------------------------------------------------------

/**
 * Why the instances of this snapshot are not one fleet (empty: they are, as far as it shows):
 * distinct ids, one coordinator, one direction, the runbook's clusters (src/fleet/identity.ts),
 * and against what this run saw before: an instance whose mongosyncID changed (another process
 * answers at its address), a direction other than the one this run started or first saw.
 */
export function fleetIdentityProblems(run: RunContext, snap: FleetSnapshot): string[] {
  const clusters = Object.keys(run.runbook.clusters ?? {});
  const mem = run.memory.identity;
  const dir = mem.direction;
  const problems = run.fleet
    .identity(snap, {
      ...(clusters.length ? { clusters } : {}),
      ...(dir && !dir.either ? { source: dir.source, destination: dir.destination } : {}),
    })
    .map((p) => p.message); // each message names its instance
  if (dir && !dir.either) {
    // the expected direction is a fact of this run, said with where it comes from
    for (const [i, p] of problems.entries())
      if (p.startsWith("expected ")) problems[i] = `${p} (the direction of ${dir.from})`;
  }
  if (dir?.either) {
    const pair = [dir.source, dir.destination].sort().join("\n");
    for (const s of snap.instances) {
      const d = sidesOf(s.progress);
      if (d && [d.source, d.destination].sort().join("\n") !== pair)
        problems.push(
          `${instanceLabel(s.ref)} syncs ${d.source} → ${d.destination}, neither way of ${dir.source} ↔ ${dir.destination} (${dir.from})`,
        );
    }
  }
  for (const s of snap.instances) {
    const id = s.progress?.mongosyncID;
    const before = mem.ids.get(s.ref.index);
    if (typeof id === "string" && before !== undefined && before !== id)
      problems.push(
        `${instanceLabel(s.ref)} now reports mongosyncID ${JSON.stringify(id)}, and ${JSON.stringify(before)} earlier in this run: another process answers at its address`,
      );
  }
  return problems;
}

/** The cluster names of an answer's directionMapping, when it has one. */
function sidesOf(p: Progress | undefined): { source: string; destination: string } | undefined {
  const d = p?.directionMapping;
  return d && typeof d.Source === "string" && typeof d.Destination === "string"
    ? { source: clusterName(d.Source), destination: clusterName(d.Destination) }
    : undefined;
}

/**
 * Every progress read of the run passes here (the runner wraps the fleet's `progress`): it learns
 * each instance's id and the fleet's direction, and says once each time the instances stop (or
 * cease) looking like one fleet. The first such read is remembered: commands stay refused for the
 * rest of the run (`checkIdentity`), since a fleet that changed under a run is not trusted again
 * until a person looked (`--resume` starts a new run's memory).
 */
export function observeIdentity(run: RunContext, snap: FleetSnapshot): void {
  const mem = run.memory.identity;
  const problems = fleetIdentityProblems(run, snap);
  for (const s of snap.instances) {
    const id = s.progress?.mongosyncID;
    if (typeof id === "string" && !mem.ids.has(s.ref.index)) mem.ids.set(s.ref.index, id);
  }
  const sides = snap.instances.map((s) => sidesOf(s.progress)).filter((d) => d !== undefined);
  if (problems.length === 0 && sides.length > 0) {
    const d = sides[0]!;
    if (!mem.direction) mem.direction = { ...d, from: "the fleet's first progress in this run" };
    // a reverse is over once every instance that tells shows the new way round
    else if (
      mem.direction.either &&
      sides.every((x) => x.source === mem.direction!.destination && x.destination === mem.direction!.source)
    )
      mem.direction = { ...d, from: mem.direction.from };
  }
  const text = problems.join("; ");
  if (text === mem.said) return;
  mem.said = text;
  if (problems.length) {
    mem.broken ??= { reason: text, at: snap.at };
    run.say("decision", {
      kind: "identity",
      ok: false,
      check: "fleet-identity",
      reason: `the instances are not one fleet: ${text}; no command will be sent to them in this run`,
    });
  } else if (mem.broken) {
    run.say("decision", {
      kind: "identity",
      ok: false,
      check: "fleet-identity",
      reason: `the instances report one fleet again, but they did not at ${new Date(mem.broken.at).toISOString()} (${mem.broken.reason}): no command will be sent to them in this run`,
    });
  }
}

/**
 * Before every command (and every resend): the instances must be one fleet now, and must have
 * been at every read of this run (`--force=fleet-identity` overrides).
 */
export function checkIdentity(ctx: StepContext, snap: FleetSnapshot): void {
  const problems = fleetIdentityProblems(ctx.run, snap);
  const broken = ctx.run.memory.identity.broken;
  const ok = problems.length === 0 && broken === undefined;
  const reason = problems.length
    ? problems.join("; ")
    : broken
      ? `they report one fleet now, but did not at ${new Date(broken.at).toISOString()}: ${broken.reason}`
      : `${snap.instances.length} instance(s) form one fleet`;
  const forced = !ok && ctx.run.force.has("fleet-identity");
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: "identity",
    ok: ok || forced,
    check: "fleet-identity",
    reason: forced ? `${reason} — overridden by --force=fleet-identity` : reason,
  });
  if (!ok && !forced) {
    throw new StepFailure(`refused (fleet-identity): the instances are not one fleet: ${reason}`, {
      reason: "interlock",
      hint: "Check the `instances:` list (every instance of this sync, and only those) and what answers at each address; then run again.",
    });
  }
}

export interface CommandSpec {
  op: CommandOp;
  body: unknown;
  /** From an instance's progress: did the command take effect (true), certainly not (false), or cannot tell (undefined)? */
  tookEffect(p: Progress): boolean | undefined;
  /** Called once, right before the first send (e.g. to disarm undo for commit). */
  beforeSend?(): void;
  /** How many instances accepted it so far (after the first answers, and at the end). */
  onAccepted?(n: number): void;
}

export interface CommandResult {
  skewMs: number;
  /** Instances the command was sent to again after progress proved it had not taken effect. */
  resent: string[];
}

const ROUNDS = 3;

export async function sendCommand(ctx: StepContext, spec: CommandSpec): Promise<CommandResult> {
  const { fleet } = ctx.run;
  spec.beforeSend?.();
  // once the fan-out has begun it is not aborted (Ctrl-C, the step's limit): a command cancelled
  // on some instances and not others would split the fleet; each request has its own timeout
  const first = await fleet.broadcast(spec.op, spec.body, undefined);
  let skewMs = first.skewMs;
  let accepted = 0;
  // refusals are final: the service handled the command and said no (DESIGN: no commit after an
  // error answer); only lost answers are reconciled
  const refused: { ref: InstanceRef; error: ApiError }[] = [];
  const unsure = new Map<number, { ref: InstanceRef; error: ApiError }>();
  const absorb = (results: typeof first.results) => {
    for (const r of results) {
      unsure.delete(r.ref.index);
      if (r.ok) accepted++;
      else if (r.error instanceof ServiceError) {
        refused.push({ ref: r.ref, error: r.error });
        ctx.run.memory.serviceErrors.push({ instance: instanceLabel(r.ref), op: spec.op, error: r.error.message });
      } else unsure.set(r.ref.index, { ref: r.ref, error: r.error });
    }
  };
  absorb(first.results);
  spec.onAccepted?.(accepted);
  const resent: string[] = [];
  for (let round = 0; unsure.size && round < ROUNDS; round++) {
    const all = [...unsure.values()];
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "reconcile",
      ok: true,
      reason: `${spec.op}: no answer from ${all.map((u) => `${instanceLabel(u.ref)} (${short(u.error)})`).join(", ")}; reading progress to learn whether it took effect (never resent blindly)`,
    });
    // a request that left may still be on its way or being handled: give it its own time limit
    // again before reading progress, so a slow answer is not mistaken for "not taken"
    // (a reset or a non-JSON answer ends the exchange on both sides; a timeout does not)
    if (all.some((u) => u.error instanceof TransportError && u.error.code === "timeout"))
      await sleep(ctx.run.defaults.requestTimeoutMs, undefined, { signal: ctx.signal });
    const snap = await readFleet(ctx);
    const again: InstanceRef[] = [];
    const unknown: string[] = [];
    const unreached: string[] = [];
    for (const u of all) {
      const seen = snap.instances.find((i) => i.ref.index === u.ref.index);
      const effect = seen?.progress ? spec.tookEffect(seen.progress) : undefined;
      if (effect === true) {
        unsure.delete(u.ref.index);
        accepted++;
        ctx.run.emit("decision", {
          index: ctx.index,
          id: ctx.id,
          kind: "reconcile",
          ok: true,
          reason: `${spec.op} took effect on ${instanceLabel(u.ref)} (state ${seen?.progress?.state ?? "?"}): not sent again`,
        });
      } else if (effect === false) {
        again.push(u.ref);
      } else {
        // the request never left (e.g. connection refused): it did not take effect, but the
        // instance's state does not say it is safe to send, so it is not resent either
        const notSent = u.error instanceof TransportError && !u.error.requestSent;
        (notSent ? unreached : unknown).push(
          `${instanceLabel(u.ref)} (${seen?.error ? short(seen.error) : `state ${seen?.progress?.state ?? "unknown"}`})`,
        );
      }
    }
    if (unknown.length || unreached.length) {
      const what = [
        unknown.length ? `cannot tell whether ${spec.op} took effect on ${unknown.join(", ")}` : "",
        unreached.length
          ? `${spec.op} never reached ${unreached.join(", ")}, and progress does not show it is safe to send`
          : "",
      ].filter(Boolean);
      throw new StepFailure(`${what.join("; ")}; nothing was resent`, {
        reason: "unsafe",
        hint: `Check those instances' progress by hand; then run again with --resume, which reads the fleet before sending anything.`,
      });
    }
    if (again.length === 0) break;
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "retry",
      ok: true,
      reason: `${spec.op} had not taken effect on ${again.map(instanceLabel).join(", ")} (progress proves it, after the request's time limit): sending it again to ${again.length === 1 ? "that instance" : "those instances"} only`,
    });
    resent.push(...again.map(instanceLabel));
    const r = await fleet.broadcast(spec.op, spec.body, undefined, { only: again.map((a) => a.index) });
    skewMs = Math.max(skewMs, r.skewMs);
    absorb(r.results);
  }
  spec.onAccepted?.(accepted);
  if (unsure.size) {
    throw new StepFailure(
      `${spec.op}: still no answer from ${[...unsure.values()].map((u) => `${instanceLabel(u.ref)} (${short(u.error)})`).join(", ")} after ${ROUNDS} checks`,
      { reason: "unsafe", hint: "Check the instances; then run again with --resume." },
    );
  }
  if (refused.length) {
    throw new StepFailure(
      `${spec.op} refused by ${refused.map((r) => r.error.message).join("; ")}${accepted > 0 ? ` (accepted by ${accepted} other instance(s): the fleet is now split)` : " (no instance accepted it: nothing took effect)"}`,
      {
        hint:
          accepted > 0
            ? "Identical commands must reach every instance: look at the refusing instances' errors before doing anything else."
            : "Read the error above; the command did not take effect.",
      },
    );
  }
  return { skewMs, resent };
}
