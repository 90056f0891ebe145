/**
 * Whether application writes may go back on at the source (issue 42): never while a commit may
 * have reached any instance. The journal knows only the commits this cutover's runs sent; a commit
 * sent by hand after a runner died, or by another runner, shows only on the fleet. So every undo
 * of a write stop (the unwind of a failing or interrupted run, `--resume`'s reopened undos, a
 * `--from` run's, `--abort`'s) first reads every instance, and writes stay stopped unless each one
 * answers in a state before commit, syncing the way the runbook says:
 * - IDLE, RUNNING, PAUSED: the states a commit is sent in, or a sync before it (src/api/commands.ts);
 * - COMMITTING, COMMITTED, REVERSING, and RUNNING the other way round: a commit took effect (spec
 *   "States and transitions"; service facts: "COMMITTED → REVERSING → RUNNING in the opposite
 *   direction (`directionMapping` swaps Source and Destination)");
 * - INITIALIZING after a restart returns to the state before it (service facts): read again until
 *   it settles, and refuse if it does not;
 * - an instance that cannot be read may be any of these: refuse (the reading that fails safe).
 *
 * What a read cannot show: a commit held in its round (service facts: "`commit` and `reverse`
 * block until they have been called on every instance"): an instance holding one still shows
 * RUNNING. The journal's commit evidence covers the commits this cutover sent; one sent by hand to
 * part of the fleet is seen only once the round closes.
 */
import { COMMAND_EFFECT } from "../../api/commands.js";
import type { SyncState } from "../../api/types.js";
import { instanceLabel } from "../../events.js";
import type { FleetSnapshot, InstanceSample } from "../../fleet/index.js";
import { delay } from "../../timers.js";
import type { RunContext } from "./context.js";
import { fleetIdentityProblems, fleetReadRetry, stateOrWhyNot } from "./fleet-ops.js";

const SETTLING = fleetReadRetry(true);

/** The states no commit has taken effect in: where start and commit are sent, and a paused sync. */
export const BEFORE_COMMIT: ReadonlySet<SyncState> = new Set([
  ...COMMAND_EFFECT.start.before,
  ...COMMAND_EFFECT.commit.before,
  ...COMMAND_EFFECT.resume.before,
]);

/** How long the read before an undo retries instances that fail or are INITIALIZING. */
export const WRITES_ON_READ_MS = 15_000;

export type WritesOnVerdict =
  | { ok: true; detail: string }
  | {
      ok: false;
      reason: string;
      /** A commit took effect on some instance (COMMITTING or later): the cutover happened. */
      committed: boolean;
    };

/** The direction the runbook's start sends, when it has one (a cutover-only runbook has none). */
function startDirection(run: RunContext): { source: string; destination: string } | undefined {
  for (const s of run.runbook.steps)
    if (s.start && s.when !== false) return { source: s.start.source, destination: s.start.destination };
  return undefined;
}

/** Why these instances rule out turning writes on (empty: they do not). */
function problems(run: RunContext, snap: FleetSnapshot): { why: string[]; committed: boolean } {
  const why: string[] = [];
  let committed = false;
  const bad = (i: InstanceSample): boolean => !i.progress || !BEFORE_COMMIT.has(i.progress.state);
  for (const i of snap.instances.filter(bad)) {
    const st = i.progress?.state;
    if (st !== undefined && st !== "INITIALIZING") committed = true;
    why.push(`${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`);
  }
  // the way round the runbook syncs: RUNNING the other way is a sync committed and reversed
  const identity = fleetIdentityProblems(run, snap);
  const start = run.memory.identity.direction ? undefined : startDirection(run);
  if (start)
    identity.push(...run.fleet.identity(snap, start).map((p) => `${p.message} (the direction of the runbook's start)`));
  why.push(...identity);
  if (identity.some((p) => /expected /.test(p))) committed = true;
  return { why, committed };
}

/**
 * Reads every instance (again while some fail or are INITIALIZING, up to `giveUpMs`) and says
 * whether writes may go back on. Never throws for the fleet's sake: an instance that cannot be
 * read is a refusal.
 */
export async function writesOnVerdict(
  run: RunContext,
  signal: AbortSignal,
  giveUpMs = WRITES_ON_READ_MS,
): Promise<WritesOnVerdict> {
  const end = Date.now() + giveUpMs;
  for (;;) {
    let snap: FleetSnapshot;
    try {
      snap = await run.fleet.progress(signal);
    } catch (err) {
      return { ok: false, reason: `the fleet could not be read (${(err as Error).message})`, committed: false };
    }
    // read again while an instance fails or is INITIALIZING: the fleet read's retry decision
    const settling = snap.instances.some(SETTLING.retryable);
    const found = problems(run, snap);
    if (found.why.length === 0)
      return {
        ok: true,
        detail: snap.instances.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`).join(", "),
      };
    if (found.committed || !settling || Date.now() >= end || signal.aborted)
      return { ok: false, reason: found.why.join("; "), committed: found.committed };
    try {
      await delay(Math.min(1000, Math.max(0, end - Date.now())), signal);
    } catch {
      return { ok: false, reason: found.why.join("; "), committed: found.committed };
    }
  }
}
