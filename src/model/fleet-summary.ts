/**
 * A large fleet in a few lines, for people: how many instances are in each state, and which lag
 * most. The live view shows these instead of a line per instance; `syncbook status` shows them
 * above its lines (64 of them scroll past a bridge call). One wording for both.
 */
import { formatDuration } from "../runbook/duration.js";

/** More instances than this: a reader summarises the fleet (the live view: instead of a line each). */
export const SUMMARY_ABOVE = 6;

export interface SummaryInstance {
  label: string;
  state?: string | undefined;
  /** Not answering (its last answer is the past): counted as such, never as its state. */
  down?: unknown;
  lagSeconds?: number | null | undefined;
}

/** `64 instances: RUNNING×61, COMMITTING×2, not answering×1`, in the order the states are first met. */
export function fleetStatesLine(all: readonly SummaryInstance[]): string {
  const states = new Map<string, number>();
  for (const i of all) {
    const k = i.down ? "not answering" : (i.state ?? "?");
    states.set(k, (states.get(k) ?? 0) + 1);
  }
  return `${all.length} instances: ${[...states].map(([s, n]) => `${s}×${n}`).join(", ")}`;
}

/** `highest lag: shard-7 42s · shard-3 40s · shard-9 12s`; undefined when no instance says its lag. */
export function highestLagLine(all: readonly SummaryInstance[], count = 3): string | undefined {
  const worst = all
    .filter((i) => typeof i.lagSeconds === "number")
    .sort((a, b) => (b.lagSeconds ?? 0) - (a.lagSeconds ?? 0))
    .slice(0, count)
    .map((i) => `${i.label} ${formatDuration((i.lagSeconds ?? 0) * 1000)}`);
  return worst.length > 0 ? `highest lag: ${worst.join(" · ")}` : undefined;
}
