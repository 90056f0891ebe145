/**
 * Fleet operations with the runner's safety rules:
 * - `readFleet`: progress from every instance, retried with backoff and jitter for the instances
 *   that fail (progress may fail for minutes after a resume; it is safe to retry);
 * - `sendCommand`: one identical command to every instance, never blindly resent. After a lost
 *   answer the command's effect is unknown until progress proves it took effect (see
 *   `sendCommand` for when a resend is allowed);
 * - `observeIdentity` / `checkIdentity`: every progress read is checked for fleet identity, and
 *   no command goes to instances that are not, or were not, one fleet in this run;
 * - `checkInterlock`: a named check that refuses the step unless `--force` names it.
 */
import {
  blocksUntilEveryInstance,
  errorsText,
  ServiceError,
  TransportError,
  type ApiError,
  type CommandOperation,
  type CommandOutcome,
  type Progress,
} from "../../api/index.js";
import { instanceLabel, type InstanceRef } from "../../events.js";
import { clusterName, type FleetSnapshot, type InstanceSample } from "../../fleet/index.js";
import { formatDuration } from "../../runbook/index.js";
import {
  StepFailure,
  StepTimeout,
  byHand,
  wayOn,
  type RunContext,
  type StepContext,
  type WayOnRun,
} from "./context.js";
import { poll } from "./poll.js";
import { retryPauseMs, type RetryPolicy } from "../../retry.js";

/** The commands the runner sends (the service's, from src/api/commands.ts). */
export type CommandOp = CommandOperation;

/**
 * Reads every instance; instances that fail are read again with backoff until `giveUpMs`, and so
 * are those that report INITIALIZING (unless `settle` is false: the start step waits that out
 * itself). INITIALIZING passes by itself: to IDLE at start-up, or after a restart (1.20+) to the
 * state the instance had before it (facts [progress 1.20]), so it is neither a failure nor IDLE;
 * what it settles in is what is judged. Given up, the last read is returned as it is (and an
 * interlock refuses an INITIALIZING instance).
 *
 * `before`: the command this read stands before (its interlocks judge it). Each retry then says
 * that nothing has been sent yet, what the command waits for and until when: an operator watching
 * a minute of retries before commit must not wonder whether commit already went out.
 */
export async function readFleet(
  ctx: StepContext,
  giveUpMs = ctx.run.defaults.progressGiveUpMs,
  settle = true,
  before?: CommandOp,
): Promise<FleetSnapshot> {
  const policy = fleetReadRetry(settle);
  const started = Date.now();
  // Stryker disable next-line ArrayDeclaration: equivalent: judge sets it before every (its only reader) runs
  let failing: InstanceSample[] = [];
  const r = await poll({
    read: (signal) => ctx.run.fleet.progress(signal),
    judge: (snap) => {
      failing = snap.instances.filter(policy.retryable);
      return failing.length === 0 ? snap : undefined;
    },
    every: (round) => {
      const ms = retryPauseMs(policy, round);
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "retry",
        ok: true,
        reason: `${whyReadAgain(failing)}; retrying in ${Math.round(ms)} ms (progress is safe to retry and may fail for minutes after a resume)${before ? nothingSentYet(before, failing, giveUpMs - (Date.now() - started)) : ""}`,
      });
      return ms;
    },
    giveUpMs,
    signal: ctx.signal,
  });
  return r.value;
}

/**
 * The fleet read's retry policy (src/retry.ts): until the read's give-up time, no count; a pause
 * random below 0.5 s, doubling up to 10 s (full jitter: runners and instances do not retry in
 * step). Read again: an instance whose progress failed (progress is safe to retry), and one still
 * INITIALIZING unless `settle` is false. Only reads retry here: a command is never resent by a
 * policy (`sendCommand`).
 */
export function fleetReadRetry(settle: boolean): RetryPolicy<InstanceSample> {
  return {
    attempts: Infinity,
    baseMs: 500,
    capMs: 10_000,
    jitter: "full",
    // Stryker disable next-line OptionalChaining: equivalent: a sample without an error has its progress
    retryable: (i) => i.error !== undefined || (settle && i.progress?.state === "INITIALIZING"),
  };
}

/** What a retry before a command adds: nothing sent, what the command waits for, for how long more. */
function nothingSentYet(op: CommandOp, waiting: InstanceSample[], leftMs: number): string {
  const who = waiting.map((i) => instanceLabel(i.ref)).join(", ");
  return `; nothing has been sent yet: ${op} waits for ${who} so that its interlocks judge the whole fleet, and is refused unsent if still so in ${formatDuration(leftMs)}`;
}

/** Why readFleet reads again: the instances whose progress failed, and those still INITIALIZING. */
export function whyReadAgain(waiting: InstanceSample[]): string {
  const failed = waiting.filter((i) => i.error);
  const initializing = waiting.filter((i) => !i.error);
  const parts: string[] = [];
  if (failed.length)
    parts.push(`progress failing on ${failed.map((f) => `${instanceLabel(f.ref)} (${short(f.error)})`).join(", ")}`);
  if (initializing.length)
    parts.push(
      `${initializing.map((i) => instanceLabel(i.ref)).join(", ")} INITIALIZING (not settled: after a restart a 1.20+ service returns to the state it had before)`,
    );
  return parts.join("; ");
}

/** What an instance shows in a refusal: its state, or why it did not answer. */
export function stateOrWhyNot(i: InstanceSample): string {
  if (i.progress) return i.progress.state;
  // Stryker disable next-line OptionalChaining,StringLiteral: equivalent: a sample without progress has its error
  const why = i.error?.message ?? "?";
  return `unreachable (${why})`;
}

export function short(err: ApiError | undefined): string {
  if (!err) return "";
  const m = err.message;
  return m.length > 160 ? `${m.slice(0, 157)}…` : m;
}

/** A named interlock: ok, or refused with the reason unless forced. Emits the decision either way. */
export function checkInterlock(
  ctx: StepContext,
  check: string,
  ok: boolean,
  reason: string,
  hint?: string,
  // the hint says what to do before the --resume that asks again, and the flags it needs then
  // (`StepFailure.beforeResume`, `resumeFlags`)
  resume?: { beforeResume: true; resumeFlags?: readonly string[] },
): void {
  const forced = !ok && ctx.run.force.has(check);
  // durable with the command it lets through (its request line is fsynced before it leaves), or
  // with the step's failure: no fsync of its own on the way to the commit
  ctx.run.emit(
    "decision",
    {
      index: ctx.index,
      id: ctx.id,
      kind: forced ? "force" : "interlock",
      ok: ok || forced,
      check,
      reason: forced ? `${reason} — overridden by --force=${check}` : reason,
    },
    { more: true },
  );
  if (!ok && !forced) {
    throw new StepFailure(`refused (${check}): ${reason}`, {
      reason: "interlock",
      hint: hint ?? `Fix the cause; only if you are certain it is safe, rerun with --force=${check}.`,
      ...(resume && hint !== undefined ? resume : {}),
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
    // a reverse is over once every instance that tells shows the new way round: with no problem
    // they all show the same one of its two ways round (identityProblems flags two directions,
    // fleetIdentityProblems a third pair), and its source says which
    else if (mem.direction.either && d.source === mem.direction.destination)
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
export function checkIdentity(
  ctx: StepContext,
  snap: FleetSnapshot,
  /** What a check asked after this one on the same read would refuse too (start's fleet-idle), said after the way on. */
  also?: string,
): void {
  const problems = fleetIdentityProblems(ctx.run, snap);
  const broken = ctx.run.memory.identity.broken;
  const ok = problems.length === 0 && broken === undefined;
  const reason = problems.length
    ? problems.join("; ")
    : broken
      ? `they report one fleet now, but did not at ${new Date(broken.at).toISOString()}: ${broken.reason}`
      : `${snap.instances.length} instance(s) form one fleet`;
  const forced = !ok && ctx.run.force.has("fleet-identity");
  ctx.run.emit(
    "decision",
    {
      index: ctx.index,
      id: ctx.id,
      kind: "identity",
      ok: ok || forced,
      check: "fleet-identity",
      reason: forced ? `${reason} — overridden by --force=fleet-identity` : reason,
    },
    { more: true },
  );
  if (!ok && !forced) {
    const way = identityWayOn(ctx.run);
    throw new StepFailure(`refused (fleet-identity): the instances are not one fleet: ${reason}`, {
      reason: "interlock",
      ...way,
      ...(also !== undefined ? { hint: `${way.hint} ${also}` } : {}),
    });
  }
}

/**
 * The way on after a fleet-identity refusal (its command was not sent), by what was done before
 * it ("then run again" was refused both ways mid-cutover). Once the cutover acted, a plain run is
 * refused (its cutover is unfinished, src/journal/cutover.ts), and so is a `--resume` of an edited
 * `instances:` list (src/journal/reconcile.ts): what answers at each address is put right. Once
 * this run acted, its `--resume`, a new run whose identity memory starts afresh, reads the fleet
 * again before it sends anything. A run that acted not is passed over by `--resume` for the last
 * one that did, which goes on from that one's place, not this run's (a `--from`), and after a
 * cutover that ended ok finds nothing to resume (a review): this run's own command again, which
 * the run's end names with its flags and values (src/cli/run.ts). A cutover whose hooks alone ran
 * (one before its start) sent the fleet nothing: its list may be wrong, not what answers there,
 * and a corrected list goes on as a new cutover, a plain run and `--resume` being refused (a
 * review: it was told to keep the list). A rehearsal names no `syncbook run`: pasted, it acts on
 * the runbook's real fleet.
 */
export function identityWayOn(run: WayOnRun & Pick<RunContext, "memory" | "again">): {
  hint: string;
  beforeResume?: true;
  againArgs?: readonly string[];
} {
  const list = "the `instances:` list (every instance of this sync, and only those)";
  if (run.mode === "rehearse") return { hint: `Check ${list} and the rehearsal's \`--fault\`s, then rehearse again.` };
  const keep = "Do not edit the `instances:` list mid-cutover: `--resume` refuses a changed list.";
  const putRight = "Put right what answers at each address (the instance of this sync that answered there before)";
  const again = "give this run's command again, as the run's end names it";
  if (run.memory.acted && !run.memory.sentToFleet)
    // the new cutover checks no value against this one's: every --var kept, a secret one masked.
    // This run's hooks ran: its --resume, said after the hint (the run's end, status, the page)
    return {
      hint: `Nothing has been sent to the fleet yet: only the runbook's hooks ran. Correct ${list} or what answers at each address. With the list corrected, ${wayOn(run, { newCutover: true })} starts over from the first step, its hooks again (a plain run is refused by this unfinished cutover, a \`--resume\` by the changed list); with it unchanged, ${run.memory.actedNow ? wayOn(run) : again}.`,
      ...(run.memory.actedNow ? { beforeResume: true as const } : run.again ? { againArgs: run.again } : {}),
    };
  // (a resend inside a fan-out is refused too: the command may be on part of the fleet, which the
  // --resume reads before it sends anything)
  if (run.memory.actedNow)
    return {
      hint: `The refused command was not sent. ${keep} ${putRight}, then ${wayOn(run)}: it reads the fleet again before it sends anything.`,
      beforeResume: true,
    };
  return {
    hint: run.memory.acted
      ? `This run sent nothing. ${keep} ${putRight}, then ${again}.`
      : `Nothing of this cutover has been sent yet. Correct ${list} or what answers at each address, then ${again} (a \`--resume\` refuses a changed list).`,
    // journaled: status and the watch page offer that command, not the --resume (a review)
    ...(run.again ? { againArgs: run.again } : {}),
  };
}

// ---- commands -------------------------------------------------------------------------------

export interface CommandSpec {
  op: CommandOp;
  body: unknown;
  /** From an instance's progress: did the command take effect (true), its `before` state (false), or cannot tell (undefined)? */
  tookEffect(p: Progress): boolean | undefined;
  /** Called once, right before the first send (e.g. to disarm undo for commit). */
  beforeSend?(): void;
  /** How many instances accepted it so far (after the first answers, and at the end, also when the step fails). */
  onAccepted?(n: number): void;
  /**
   * Once, when the send is over (ended, failed or cut short): how many instances accepted it, and
   * how many gave no usable answer after a request that may have reached them, which progress did
   * not settle (each may hold it). Neither: every instance refused it, or it never left.
   */
  onSettled?(s: { accepted: number; mayHold: number }): void;
  /** Send to these instance indexes only (a targeted command: kit/targets.ts). */
  only?: readonly number[] | undefined;
}

export interface CommandResult {
  skewMs: number;
  /** Instances the command was sent to again (its progress showed it had not taken effect). */
  resent: string[];
}

/** Resend rounds at most, to instances whose progress shows the command did not take effect. */
const ROUNDS = 3;

/** An instance whose answer was lost: what is known of its command. */
interface Pending {
  ref: InstanceRef;
  error: ApiError;
  /** A request may have reached the service (in this round or an earlier one): its effect is unknown. */
  mayHaveReached: boolean;
  /** The last request ran into its time limit: it may still be in flight. */
  timedOut: boolean;
  /** A repeat sent after a lost answer was refused: a sign the first took effect, to be proven by progress. */
  repeatRefused?: ServiceError;
  /** Its last progress read (undefined: none answered). */
  seen?: InstanceSample;
}

/**
 * Sends `spec.op` to every instance at once, then reconciles lost answers. The rules (issue 12
 * item 1, service facts "Multiple instances"):
 * - a refusal (`success: false`) is an answer: never resent, the step fails;
 * - after any transport failure once the request may have reached the service (a reset, a time
 *   limit, a broken answer), the effect is unknown until progress proves it took effect: progress
 *   is read for a settle window (the request's time limit; twice that after a timeout, since the
 *   request may still be in flight) before anything is judged;
 * - a state the command is sent in (`before`) proves it did not take effect only if the request
 *   certainly never left, or, for `pause` and `resume`, once the settle window passed (the one
 *   resend then allowed: a refusal of it is the service saying the first took effect, which
 *   progress must still show); a `start` that may have left is never sent again (it can take
 *   effect after its time limit: `sentOnceOnly`, src/api/commands.ts);
 * - `commit` and `reverse` block until every instance has them: an instance that received one
 *   shows its old state until the last one has it, so it is never resent to an instance it may
 *   have reached; only instances it certainly never reached get it again;
 * - whenever in doubt, stop and say what was seen rather than resend.
 */
export async function sendCommand(ctx: StepContext, spec: CommandSpec): Promise<CommandResult> {
  const { fleet } = ctx.run;
  const op = spec.op;
  const blocking = blocksUntilEveryInstance(op);
  spec.beforeSend?.();
  // once the fan-out has begun it is not aborted (Ctrl-C, the step's limit): a command cancelled
  // on some instances and not others would split the fleet; each request has its own timeout
  const first = await fleet.broadcast(op, spec.body, undefined, {
    ...(spec.only ? { only: spec.only } : {}),
    ...(blocking ? { onAnswer: splitNews(ctx, op, spec.only?.length ?? fleet.refs.length) } : {}),
  });
  let skewMs = first.skewMs;
  const accepted = new Set<number>();
  const refused: { ref: InstanceRef; error: ServiceError }[] = [];
  const pending = new Map<number, Pending>();
  const resent: string[] = [];
  let rounds = 0;

  const absorb = (results: typeof first.results): void => {
    for (const r of results) {
      const prev = pending.get(r.ref.index);
      if (r.ok) {
        pending.delete(r.ref.index);
        accepted.add(r.ref.index);
      } else if (r.error instanceof ServiceError) {
        if (prev?.mayHaveReached) {
          // "or the service refuses a repeat": the first may have taken effect late; progress says
          pending.set(r.ref.index, { ...prev, repeatRefused: r.error, timedOut: false });
        } else {
          pending.delete(r.ref.index);
          refused.push({ ref: r.ref, error: r.error });
          ctx.run.memory.serviceErrors.push({ instance: instanceLabel(r.ref), op, error: r.error.message });
        }
      } else {
        const reached = !(r.error instanceof TransportError && !r.error.requestSent);
        pending.set(r.ref.index, {
          ref: r.ref,
          error: r.error,
          mayHaveReached: reached || prev?.mayHaveReached === true,
          timedOut: r.error instanceof TransportError && r.error.code === "timeout",
        });
      }
    }
  };
  const tookEffect = (u: Pending, p: Progress): void => {
    pending.delete(u.ref.index);
    accepted.add(u.ref.index);
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "reconcile",
      ok: true,
      reason: `${op} took effect on ${instanceLabel(u.ref)} (state ${p.state}${u.repeatRefused ? `; the repeat was refused: ${u.repeatRefused.errorDescription || u.repeatRefused.error}` : ""}): not sent again`,
    });
  };

  absorb(first.results);
  spec.onAccepted?.(accepted.size);
  try {
    while (pending.size) {
      const all = [...pending.values()];
      // a blocking command one instance refused cannot take effect anywhere in this run (the rest
      // wait for that one): their state proves nothing, so a settle window would only make the
      // operator wait for a judgement already known
      const windowMs = blocking && refused.length > 0 ? 0 : settleWindow(ctx, all);
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "reconcile",
        ok: true,
        reason: `${op}: no answer from ${all.map((u) => `${instanceLabel(u.ref)} (${short(u.error)})`).join(", ")}; reading progress${windowMs > 0 ? ` for up to ${formatDuration(windowMs)}` : ""} to learn whether it took effect (never resent blindly)`,
      });
      const snap = await settle(ctx, pending, windowMs, (p) => spec.tookEffect(p), tookEffect);
      if (!pending.size) break;

      // judge what is left after the settle window
      const again: InstanceRef[] = [];
      const doubts: string[] = [];
      const stateOf = (u: Pending): string =>
        u.seen?.progress ? `state ${u.seen.progress.state}` : u.seen?.error ? short(u.seen.error) : "state unknown";
      for (const u of pending.values()) {
        const effect = u.seen?.progress ? spec.tookEffect(u.seen.progress) : undefined;
        if (effect === false && !u.mayHaveReached) again.push(u.ref);
        else if (effect === false && u.repeatRefused)
          doubts.push(
            `${instanceLabel(u.ref)} refused a repeat (${u.repeatRefused.error}: ${u.repeatRefused.errorDescription}) yet still shows ${stateOf(u)}: its first ${op} may have taken effect without showing it`,
          );
        else if (effect === false && op === "start")
          doubts.push(
            `${instanceLabel(u.ref)} gave no usable answer (${short(u.error)}) and still shows ${stateOf(u)} after ${formatDuration(windowMs)}: a start can take effect later than its request's time limit, and start is never sent twice`,
          );
        else if (effect === false && blocking)
          doubts.push(
            `${instanceLabel(u.ref)} gave no usable answer (${short(u.error)}) and shows ${stateOf(u)}, which proves nothing: ${op} blocks until every instance has received it, so it may be holding one, which takes effect as soon as the last instance has it`,
          );
        else if (effect === false) again.push(u.ref);
        else if (!u.mayHaveReached)
          doubts.push(
            `${op} never reached ${instanceLabel(u.ref)} (${short(u.error)}; progress: ${stateOf(u)}), and progress does not show it is safe to send`,
          );
        else doubts.push(`cannot tell whether ${op} took effect on ${instanceLabel(u.ref)} (${stateOf(u)})`);
      }
      // a command that does not block is resent only when every doubt is resolved; a blocking one
      // still goes to the instances it never reached: the others may be waiting for exactly those
      if (again.length === 0 || (doubts.length > 0 && !blocking) || rounds >= ROUNDS) {
        const lost =
          rounds >= ROUNDS && again.length
            ? [
                `still no proof that ${op} took effect on ${again.map(instanceLabel).join(", ")} after ${ROUNDS} resends`,
              ]
            : [];
        const no = refused.length
          ? [
              `${op} refused by ${errorsText(
                refused.map((x) => x.error),
                { every: accepted.size > 0 },
              )}`,
            ]
          : [];
        throw unsafe(ctx.run, op, [...no, ...doubts, ...lost], accepted.size, resent);
      }
      checkIdentity(ctx, snap);
      rounds++;
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "retry",
        ok: true,
        // Stryker disable next-line OptionalChaining: equivalent: every instance in `again` is pending
        reason: `${op} had not taken effect on ${again.map(instanceLabel).join(", ")} (${again.every((r) => !pending.get(r.index)?.mayHaveReached) ? "the request never left" : `progress still shows ${statesOf(pending, again)} after ${formatDuration(windowMs)}`}): sending it again to ${again.length === 1 ? "that instance" : "those instances"} only${doubts.length ? `; still unsure of ${doubts.length} other(s)` : ""}`,
      });
      resent.push(...again.map(instanceLabel));
      const r = await fleet.broadcast(op, spec.body, undefined, { only: again.map((a) => a.index) });
      skewMs = Math.max(skewMs, r.skewMs);
      absorb(r.results);
    }
  } catch (err) {
    throw explainAbort(ctx, err, op, pending, accepted.size, refused);
  } finally {
    spec.onAccepted?.(accepted.size);
    spec.onSettled?.({
      accepted: accepted.size,
      mayHold: [...pending.values()].filter((u) => u.mayHaveReached).length,
    });
  }
  if (refused.length) {
    const n = accepted.size;
    throw new StepFailure(
      `${op} refused by ${errorsText(
        refused.map((r) => r.error),
        { every: n > 0 },
      )}${n > 0 ? ` (accepted by ${n} other instance(s): the fleet is now split)` : spec.only ? ` (no instance it was sent to accepted it; it was sent to ${spec.only.length} of ${fleet.refs.length} instances only)` : " (no instance accepted it: this request took no effect)"}`,
      {
        hint:
          n > 0
            ? "Identical commands must reach every instance: look at the refusing instances' errors before doing anything else."
            : "Read the error above; the command did not take effect.",
      },
    );
  }
  return { skewMs, resent };
}

/**
 * A blocking command (commit, reverse) refused by one instance while others have not answered:
 * they wait in its round for the refuser, so the fleet is split the moment the refusal arrives,
 * though their answers come only at their time limit. Said once, at once.
 */
function splitNews(ctx: StepContext, op: CommandOp, sentTo: number): (ref: InstanceRef, o: CommandOutcome) => void {
  let answered = 0;
  let said = false;
  return (ref, o) => {
    answered++;
    // an answer that is no refusal has no ServiceError (an accepted one has no error at all)
    const error = (o as { error?: unknown }).error;
    if (said || !(error instanceof ServiceError) || answered >= sentTo) return;
    said = true;
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "reconcile",
      ok: false,
      reason: `${instanceLabel(ref)} refused ${op} (${short(error)}) while ${sentTo - answered} other instance(s) have not answered: ${op} blocks until every instance has it, so those that took it hold it: the fleet is split; nothing more is sent, and the step ends once their answers are in (at most ${formatDuration(ctx.run.defaults.requestTimeoutMs)})`,
    });
  };
}

/** The states the resent instances showed, e.g. `IDLE`. */
function statesOf(pending: Map<number, Pending>, again: InstanceRef[]): string {
  // Stryker disable next-line OptionalChaining,StringLiteral: equivalent: every resent instance is pending and was resent for a state its progress showed
  const states = new Set(again.map((r) => pending.get(r.index)?.seen?.progress?.state ?? "?"));
  // Stryker disable next-line StringLiteral: equivalent: each command is sent in one state (COMMAND_EFFECT's before), so one state shows
  return [...states].join("/");
}

/**
 * How long to read progress before judging: nothing to wait for when every request certainly
 * never left; else the request's own time limit, twice that after a timeout (the request may
 * still be in flight, then take effect).
 */
function settleWindow(ctx: StepContext, all: Pending[]): number {
  if (!all.some((u) => u.mayHaveReached)) return 0;
  const t = ctx.run.defaults.requestTimeoutMs;
  return all.some((u) => u.timedOut) ? 2 * t : t;
}

/**
 * Reads progress until every pending instance shows the command took effect, or the window
 * ends; each instance's last read is kept in `seen`. Then one read that retries failing
 * instances (progress may fail for minutes after a resume), if some never answered.
 */
async function settle(
  ctx: StepContext,
  pending: Map<number, Pending>,
  windowMs: number,
  effectOf: (p: Progress) => boolean | undefined,
  tookEffect: (u: Pending, p: Progress) => void,
): Promise<FleetSnapshot> {
  const judge = (snap: FleetSnapshot): true | undefined => {
    for (const s of snap.instances) {
      const u = pending.get(s.ref.index);
      if (!u) continue;
      u.seen = s;
      if (s.progress && effectOf(s.progress) === true) tookEffect(u, s.progress);
    }
    // Stryker disable next-line BooleanLiteral: equivalent: any result but undefined ends the poll
    return pending.size === 0 ? true : undefined;
  };
  let last: FleetSnapshot | undefined;
  if (windowMs > 0) {
    const r = await poll({
      read: (signal) => ctx.run.fleet.progress(signal),
      judge,
      every: Math.max(20, Math.min(ctx.pollMs, windowMs / 4)),
      giveUpMs: windowMs,
      signal: ctx.signal,
    });
    // done: nothing is pending, so nothing below reads again
    last = r.value;
  }
  if (!last || [...pending.values()].some((u) => !u.seen?.progress)) {
    last = await readFleet(ctx);
    judge(last);
  }
  return last;
}

function unsafe(run: WayOnRun, op: CommandOp, doubts: string[], accepted: number, resent: string[]): StepFailure {
  const did = [
    accepted > 0 ? `accepted by ${accepted} instance(s)` : "answered by no instance",
    resent.length ? `sent again to ${resent.join(", ")}` : "",
  ].filter(Boolean);
  return new StepFailure(
    `${doubts.join("; ")}; ${resent.length ? "nothing more was sent" : "nothing was resent"} (${op} ${did.join(", ")})`,
    {
      reason: "unsafe",
      beforeResume: true,
      hint: inDoubtWayOn(run),
    },
  );
}

/** A command in doubt on some instances: their progress looked at by hand first, then the way on, which reads the fleet. */
function inDoubtWayOn(run: WayOnRun): string {
  return byHand(
    run,
    "fleet",
    `Check those instances' progress by hand before anything else; then ${wayOn(run)}, which reads the fleet before sending anything.`,
  );
}

/** A reconcile cut short by the step's time limit says what was known then (never a bare abort). */
function explainAbort(
  ctx: StepContext,
  err: unknown,
  op: CommandOp,
  pending: Map<number, Pending>,
  accepted: number,
  refused: { error: ServiceError }[],
): unknown {
  if (!ctx.signal.aborted || err instanceof StepFailure) return err;
  const reason: unknown = ctx.signal.reason;
  if (!(reason instanceof StepTimeout)) return err;
  const open = [...pending.values()]
    .map(
      (u) =>
        `${instanceLabel(u.ref)} (${short(u.error)}; ${u.seen?.progress ? `last seen ${u.seen.progress.state}` : "no progress read"})`,
    )
    .join(", ");
  return new StepFailure(
    `${op} was sent (accepted by ${accepted} instance(s)${
      refused.length
        ? `; refused by ${errorsText(
            refused.map((r) => r.error),
            { every: accepted > 0 },
          )}`
        : ""
    }); the step's time limit (${reason.limitText}) passed while reading progress to learn whether it took effect on ${open || "the other instances"}; nothing more was sent`,
    {
      reason: "unsafe",
      beforeResume: true,
      hint: `${inDoubtWayOn(ctx.run)} A command step's \`timeout\` should leave room for twice the request timeout.`,
    },
  );
}
