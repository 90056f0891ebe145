/**
 * The service's commands and the states they move an instance between (spec "States and
 * transitions", plus service facts: pause/resume/reverse, INITIALIZING before RUNNING from 1.20).
 * One table for everything that judges a command by the state it left: the runner's precondition
 * checks, its reconcile after a lost answer, and `--resume`'s reconcile from the journal.
 */

/** A state-changing command of the sync service (service facts add pause, resume, reverse). */
export type CommandOperation = "start" | "commit" | "pause" | "resume" | "reverse";

/** For each command: the states it is sent in (not taken yet) and the states it leaves (took effect). */
export const COMMAND_EFFECT: Readonly<
  Record<CommandOperation, { before: readonly string[]; after: readonly string[] }>
> = {
  // PAUSED/COMMITTING/COMMITTED can only follow a start
  start: { before: ["IDLE"], after: ["INITIALIZING", "RUNNING", "PAUSED", "COMMITTING", "COMMITTED"] },
  commit: { before: ["RUNNING"], after: ["COMMITTING", "COMMITTED"] },
  pause: { before: ["RUNNING"], after: ["PAUSED"] },
  resume: { before: ["PAUSED"], after: ["RUNNING"] },
  reverse: { before: ["COMMITTED"], after: ["RUNNING"] },
};

export const COMMAND_OPERATIONS = Object.keys(COMMAND_EFFECT) as readonly CommandOperation[];

export function isCommandOperation(s: string): s is CommandOperation {
  return Object.hasOwn(COMMAND_EFFECT, s);
}

/** Did `op` take effect on an instance now in `state`: yes, certainly not, or cannot tell (undefined)? */
export function commandTookEffect(op: CommandOperation, state: string | undefined): boolean | undefined {
  if (state === undefined) return undefined;
  const e = COMMAND_EFFECT[op];
  return e.after.includes(state) ? true : e.before.includes(state) ? false : undefined;
}
