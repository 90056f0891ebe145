/**
 * The service's commands and the states they move an instance between (spec "States and
 * transitions", plus service facts: pause/resume/reverse, INITIALIZING before IDLE from 1.20 —
 * "not ready for /start" — and REVERSING between a reverse and RUNNING the other way).
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
      /**
       * The states it is sent in. Seen after a lost answer, they prove it did not take effect only
       * when the request never left, or once a settle window has passed and the command does not
       * block (see BLOCKING): an effect may show late, and a blocking command is held, unapplied,
       * until every instance has it.
       */
      before: readonly SyncState[];
      /** The states that show it took effect (including later ones only it can lead to). */
      after: readonly SyncState[];
      /** The state right after it (before the service moves on by itself; see SPONTANEOUS). */
      result: readonly SyncState[];
    }
  >
> = {
  // PAUSED/COMMITTING/COMMITTED/REVERSING can only follow a start. INITIALIZING is neither: it
  // comes before IDLE (at start-up, or after a restart), so after a lost start it cannot tell.
  start: {
    before: ["IDLE"],
    after: ["RUNNING", "PAUSED", "COMMITTING", "COMMITTED", "REVERSING"],
    result: ["RUNNING"],
  },
  commit: { before: ["RUNNING"], after: ["COMMITTING", "COMMITTED"], result: ["COMMITTING"] },
  pause: { before: ["RUNNING"], after: ["PAUSED"], result: ["PAUSED"] },
  resume: { before: ["PAUSED"], after: ["RUNNING"], result: ["RUNNING"] },
  // COMMITTED → REVERSING → RUNNING the other way; that sync can then be paused or committed
  // (COMMITTED again is the state before a reverse too: it cannot tell)
  reverse: { before: ["COMMITTED"], after: ["REVERSING", "RUNNING", "PAUSED", "COMMITTING"], result: ["REVERSING"] },
};

/**
 * The moves the service makes by itself, with time: INITIALIZING → IDLE (1.20, once ready for
 * /start), COMMITTING → COMMITTED (spec), REVERSING → RUNNING (facts: "COMMITTED → REVERSING →
 * RUNNING in the opposite direction").
 */
export const SPONTANEOUS: Readonly<Partial<Record<SyncState, SyncState>>> = {
  INITIALIZING: "IDLE",
  COMMITTING: "COMMITTED",
  REVERSING: "RUNNING",
};

/** The states plus those the service reaches from them by itself. */
export function closeStates(states: Iterable<SyncState>): Set<SyncState> {
  const out = new Set(states);
  for (const s of [...out]) {
    for (let next = SPONTANEOUS[s]; next !== undefined && !out.has(next); next = SPONTANEOUS[next]) out.add(next);
  }
  return out;
}

/** Where an instance may be once `op` took effect and nothing else was sent: its result, closed. */
export function settledStates(op: CommandOperation): SyncState[] {
  return [...closeStates(COMMAND_EFFECT[op].result)];
}

/**
 * The commands that block (service facts: "`commit` and `reverse` block until they have been
 * called on every instance"): an instance that received one answers, and applies it, only when
 * the last instance has it. Until then its progress shows the state from before: no proof that
 * it did not receive it.
 */
export const BLOCKING: readonly CommandOperation[] = ["commit", "reverse"];

/** Does `op` wait, unapplied, until every instance has received it? */
export function blocksUntilEveryInstance(op: CommandOperation): boolean {
  return BLOCKING.includes(op);
}

/**
 * Is `op` never sent again to an instance it may have reached? `commit` and `reverse` may be held
 * by an instance until the rest have them (its state proves nothing); `start` may take effect
 * after its request timed out (service facts), and a second one is what the tool promises never
 * to send. Only `pause` and `resume` are sent again once the instance's state proves the first
 * did not take effect.
 */
export function sentOnceOnly(op: CommandOperation): boolean {
  return op === "start" || blocksUntilEveryInstance(op);
}

export const COMMAND_OPERATIONS = Object.keys(COMMAND_EFFECT) as readonly CommandOperation[];

const COMMAND_PATH = new RegExp(`/api/v1/(${COMMAND_OPERATIONS.join("|")})/?(?:[?#].*)?$`);

/** The command a request's path sends (`…/api/v1/commit`, with an optional slash, query or fragment), if any: for the journal's readers. */
export function commandOfPath(path: string): CommandOperation | undefined {
  return COMMAND_PATH.exec(path)?.[1] as CommandOperation | undefined;
}

export function isCommandOperation(s: string): s is CommandOperation {
  return Object.hasOwn(COMMAND_EFFECT, s);
}

/** Did `op` take effect on an instance now in `state`: yes, certainly not, or cannot tell (undefined)? */
export function commandTookEffect(op: CommandOperation, state: string | undefined): boolean | undefined {
  // no state (an instance that did not answer) is in no list: cannot tell
  const e = COMMAND_EFFECT[op];
  const is = (list: readonly string[]): boolean => (list as readonly (string | undefined)[]).includes(state);
  return is(e.after) ? true : is(e.before) ? false : undefined;
}
