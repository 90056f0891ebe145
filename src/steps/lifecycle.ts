/**
 * `pause`, `resume`, `reverse`: a state precondition on every instance, then the identical
 * command. One definition serves the three (they differ only in the command, its states and
 * what lint's model resets).
 */
import type { RuleInfo } from "../diagnostics.js";
import { COMMAND_EFFECT, commandTookEffect } from "../api/index.js";
import { reversedVerification } from "../api/verifier-memory.js";
import { instanceLabel } from "../events.js";
import type { Step } from "../runbook/types.js";
import { toEach, type StepKindDef, type StepTraits } from "./kit/define.js";
import { checkIdentity, checkInterlock, readFleet, sendCommand, stateOrWhyNot } from "./kit/fleet-ops.js";
import type { SequenceOutcome, SequenceStep } from "./kit/sequence.js";
import { COMMAND_IMPOSSIBLE_STATE, commandPossible, resultOf } from "./kit/sequence.js";
import { commandTargets } from "./kit/targets.js";

/** Lint's `reverse-not-reversible` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const REVERSE_NOT_REVERSIBLE: RuleInfo = {
  id: "reverse-not-reversible",
  severity: "error",
  description: "`reverse` of a sync whose `start` did not set `reversible: true`.",
  spec: "`reverse` (only in COMMITTED, only if `start` had `reversible: true`); before 1.20 `reversible` needed write blocking on source and destination.",
  source: "service-facts.md",
  hint: "Set `reversible: true` in start (before service 1.20 with `enableUserWriteBlocking: sourceAndDestination`; from 1.20 never send that field: the service manages write blocking itself), or remove the reverse step.",
};

type Op = "pause" | "resume" | "reverse";
type LifecycleBody = Record<string, never>;

const TITLES: Record<Op, string> = { pause: "Pause", resume: "Resume", reverse: "Reverse" };

/** Each sends its own command; none stops writes, waits, uses the verifier or calls a plugin (a table, as every kind's traits). */
const TRAITS: Record<Op, StepTraits> = {
  pause: {
    command: "pause",
    opensWriteStop: false,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  resume: {
    command: "resume",
    opensWriteStop: false,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  reverse: {
    command: "reverse",
    opensWriteStop: false,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    // a failed reverse is a rollback that did not happen: "run ok, exit 0" would say it did
    failureStopsRun:
      "a reverse that failed or was refused leaves the sync not reversed: going on would end the run ok, exit 0, without the reversal",
  },
};

function sequence(op: Op, at: SequenceStep): SequenceOutcome {
  const f = at.flow;
  if (op === "reverse" && f.states.has("COMMITTED")) {
    const starts = f.starts.map((j) => ({
      j,
      s: (at.runbook.steps[j] as Step & { start: { reversible?: boolean } }).start,
    }));
    // Stryker disable next-line MethodExpression: equivalent: lint's model holds at most one start (a second is start-twice, not recorded)
    if (starts.length > 0 && starts.every(({ s }) => s.reversible !== true)) {
      at.report(
        REVERSE_NOT_REVERSIBLE,
        `${at.line(starts[0]!.j)} does not set \`reversible: true\`, so the sync cannot be reversed.`,
      );
    }
    at.reportPending(f, ` before the reverse at line ${at.lineOf(at.index)}, which needs COMMITTED`);
  }
  if (!commandPossible(at, op)) return { ok: f };
  f.states = resultOf(op, at.initializing);
  // the embedded verifier "cannot be resumed": after a resume it starts again from the beginning
  if (op === "resume") {
    f.canCommitSeen = false;
    f.streamHashingSeen = false;
  }
  if (op === "reverse") {
    // the sync runs the other way now: its own write stop, canCommit wait and commit
    f.committed = undefined;
    f.pendingCommits = new Set();
    f.writesStopped = false;
    f.canCommitSeen = false;
    f.ceaReached = false;
    // and its verification is a new one (the run forgets the check before it: src/api/verifier-memory.ts
    // reversedVerification), which a verifier that holds the one before it refuses (verify-after-reverse)
    if (f.checkMay !== undefined) f.checkBeforeReverse = { reverse: at.index, check: f.checkMay };
    f.checkMay = undefined;
    f.checkMust = false;
    f.writesOffMay = false;
    f.writesOffMust = false;
  }
  return { ok: f };
}

export function lifecycle(op: Op): StepKindDef<LifecycleBody> {
  return {
    body: (step) => (step[op] === undefined ? undefined : {}),
    title: () => TITLES[op],
    // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
    rules: [REVERSE_NOT_REVERSIBLE, COMMAND_IMPOSSIBLE_STATE],
    traits: TRAITS[op],
    hookCall: undefined,
    writesCheck: undefined,
    undoTimeoutMs: undefined,
    condition: undefined,
    startRequest: undefined,
    rehearsal: undefined,
    plan: (_b, to) => [
      ...toEach(to, "GET", "/api/v1/progress", { note: "interlock: state" }),
      ...toEach(to, "POST", `/api/v1/${op}`, { body: {} }),
    ],
    // Stryker disable next-line ArrowFunction: static: lint's registry builds this object once at import, so a mutant here cannot be switched on per test (test/lint/command-sequence.test.ts pins what it does)
    sequence: (_b, at) => sequence(op, at),
    async run(ctx) {
      const from: readonly string[] = COMMAND_EFFECT[op].before;
      const snap = await readFleet(ctx, undefined, undefined, op);
      checkIdentity(ctx, snap);
      const { judged, only } = await commandTargets(ctx, op, snap);
      // Stryker disable next-line StringLiteral: equivalent: no state is any string that is not one
      const wrong = judged.filter((i) => !from.includes(i.progress?.state ?? ""));
      // Stryker disable next-line StringLiteral: equivalent: pause, resume and reverse are each sent from one state
      const states = from.join(" or ");
      checkInterlock(
        ctx,
        "fleet-state",
        wrong.length === 0,
        wrong.length === 0
          ? `every instance is ${states}`
          : `${op} is allowed only in ${states}; ${wrong.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`).join(", ")}`,
      );
      // a reverse swaps directionMapping (service facts), not necessarily at once: either way round
      // is legal until every instance shows the new one (fleet-ops.ts observeIdentity)
      const identity = ctx.run.memory.identity;
      if (op === "reverse" && identity.direction)
        identity.direction = { ...identity.direction, from: `the reverse step ${ctx.id}`, either: true };
      const { memory } = ctx.run;
      // in doubt before this send: an earlier run's reverse (src/run/resume-decide.ts seeds it)
      let doubtBefore: string | undefined;
      await sendCommand(ctx, {
        op,
        body: {},
        only,
        tookEffect: (p) => commandTookEffect(op, p.state),
        // once a reverse may reach an instance, the verification so far may compare a sync that no
        // longer runs: forgotten at the send, refused or split alike (fails safe: never "verified"
        // on it). The journal's fold does the same at its request line (src/journal/state.ts)
        ...(op === "reverse"
          ? {
              beforeSend: () => {
                reversedVerification(memory.verifier, ctx.id);
                // in doubt from the first send until it is known to have taken effect or not (fails
                // safe: a send the journal's failure cut short never settles): the journal's rule,
                // src/run/earlier.ts `reverseInDoubt`
                doubtBefore = memory.reverseInDoubt;
                memory.reverseInDoubt = ctx.id;
              },
              // every instance refused it, or it never left: this send took no effect
              onSettled: ({ accepted, mayHold }: { accepted: number; mayHold: number }) => {
                if (accepted + mayHold > 0) return;
                if (doubtBefore === undefined) delete memory.reverseInDoubt;
                else memory.reverseInDoubt = doubtBefore;
              },
            }
          : {}),
      });
      if (op === "reverse") {
        // the sync runs the other way now: its commit needs its own write stop
        memory.writesStopped = false;
        ctx.run.memory.commitSent = false;
        delete ctx.run.memory.commitWritesForced;
        ctx.run.memory.commitAccepted = false;
        delete ctx.run.memory.commitRefused;
        ctx.run.memory.reversed = ctx.id;
        delete ctx.run.memory.reverseInDoubt;
        // the new sync's commit counts its own refusals, not the one's before (src/journal/state.ts
        // `refusalsCounted`, the journal's count, forgets them at the same reverse)
        ctx.run.memory.serviceErrors = [];
        ctx.run.plugins.undo.rearm();
      }
    },
  };
}
