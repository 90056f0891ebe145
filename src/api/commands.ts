/**
 * The service's commands and the states they move an instance between (spec "States and
 * transitions", plus service facts: pause/resume/reverse, INITIALIZING before RUNNING from 1.20).
 * One table for everything that judges a command by the state it left: the runner's precondition
 * checks, its reconcile after a lost answer, `--resume`'s reconcile from the journal, and lint's
 * model of the states a runbook's steps can meet.
 */
import type { SyncState } from "./types.js";

/** A state-changing command of the sync service (service facts add pause, resume, reverse). */
export type CommandOperation = "start" | "commit" | "pause" | "resume" | "reverse";

/** For each command: the states it is sent in (not taken yet) and the states it leaves (took effect). */
export const COMMAND_EFFECT: Readonly<
  Record<
    CommandOperation,
    {
      /** The states it is sent in: seen after a lost answer, it did not take effect. */
      before: readonly SyncState[];
      /** The states that show it took effect (including later ones only it can lead to). */
      after: readonly SyncState[];
      /** The state right after it (before the service moves on by itself; see SPONTANEOUS). */
      result: readonly SyncState[];
    }
  >
> = {
  // PAUSED/COMMITTING/COMMITTED can only follow a start; INITIALIZING comes first from 1.20
  start: {
    before: ["IDLE"],
    after: ["INITIALIZING", "RUNNING", "PAUSED", "COMMITTING", "COMMITTED"],
    result: ["INITIALIZING", "RUNNING"],
  },
  commit: { before: ["RUNNING"], after: ["COMMITTING", "COMMITTED"], result: ["COMMITTING"] },
  pause: { before: ["RUNNING"], after: ["PAUSED"], result: ["PAUSED"] },
  resume: { before: ["PAUSED"], after: ["RUNNING"], result: ["RUNNING"] },
  reverse: { before: ["COMMITTED"], after: ["RUNNING"], result: ["RUNNING"] },
};

/** The moves the service makes by itself, with time (INITIALIZING → RUNNING: 1.20; COMMITTING → COMMITTED: spec). */
export const SPONTANEOUS: Readonly<Partial<Record<SyncState, SyncState>>> = {
  INITIALIZING: "RUNNING",
  COMMITTING: "COMMITTED",
};

export const COMMAND_OPERATIONS = Object.keys(COMMAND_EFFECT) as readonly CommandOperation[];

export function isCommandOperation(s: string): s is CommandOperation {
  return Object.hasOwn(COMMAND_EFFECT, s);
}

/** Did `op` take effect on an instance now in `state`: yes, certainly not, or cannot tell (undefined)? */
export function commandTookEffect(op: CommandOperation, state: string | undefined): boolean | undefined {
  if (state === undefined) return undefined;
  const e = COMMAND_EFFECT[op];
  const is = (list: readonly string[]): boolean => list.includes(state);
  return is(e.after) ? true : is(e.before) ? false : undefined;
}
