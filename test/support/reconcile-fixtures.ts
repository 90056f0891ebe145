/**
 * Journal states, commands and fleet readings built by hand for the unit tests of `--resume`'s
 * reconcile (test/journal/reconcile.test.ts, reconcile-rules.test.ts).
 */
import type { FleetReading, JournalState, JournalStep, SentCommand } from "../../src/journal/index.js";
import type { Outcome } from "../../src/events.js";
import { traitsOf } from "../../src/steps/index.js";
import { STEPS } from "./journal.js";

export type Steps = { index: number; id: string; kind: string }[];
/** The runbook as the commands' argument, as the resume builds it (src/next-run.ts `runTarget`). */
export const ARGS = { status: "rb.yaml", run: "rb.yaml --var site=west" };
export const rb = (steps: Steps, hash = "a".repeat(64)) => ({
  hash,
  // the command a step sends is its kind's trait, as the resume hands it to reconcile
  steps: steps.map(({ id, kind }) => ({ id, kind, command: traitsOf(kind).command })),
  args: ARGS,
});
export const RB = rb(STEPS);
export const FILE = "/j/run.jsonl";

/** Step statuses by index: "ok", "failed"…, "cut" (started, never ended) or "-" (not started). */
export function state(
  statuses: string[],
  commands: SentCommand[] = [],
  more: Partial<JournalState> = {},
  steps: Steps = STEPS,
): JournalState {
  const list: JournalStep[] = steps.map((s, i) => {
    const st = statuses[i] ?? "-";
    const base = { index: s.index, id: s.id, kind: s.kind, started: st !== "-" && st !== "skipped" };
    return st === "-" || st === "cut" ? base : { ...base, finished: st as Outcome };
  });
  return {
    file: FILE,
    runbook: "sales",
    hash: RB.hash,
    steps: list,
    commandsSent: commands,
    stopWritesSucceeded: false,
    hooksRan: [],
    hookCalls: [],
    lastSeq: 9,
    segments: [],
    warnings: [],
    ...more,
  };
}

export type A = "ok" | "error" | "unknown";
/** A command answered per instance: `i0` gets the first answer, `i1` the second… */
export function cmd(op: SentCommand["op"], stepIndex: number, ...answers: A[]): SentCommand {
  return sent(
    op,
    stepIndex,
    answers.map((answered, i) => ({ instance: `i${i}`, answered })),
  );
}
/** A command with its answers per instance as given; no instance at all counts as unknown. */
export function sent(op: SentCommand["op"], stepIndex: number, perInstance: SentCommand["perInstance"]): SentCommand {
  const a = perInstance.map((p) => p.answered);
  const answered: A = a.every((x) => x === "ok") ? "ok" : a.includes("unknown") || !a.length ? "unknown" : "error";
  return { op, stepIndex, instances: perInstance.map((p) => p.instance), answered, perInstance };
}
/** Instance `i<n>` shows the n-th state (null: unreachable); canCommit true while RUNNING. */
export const fleet = (...states: (string | null)[]): FleetReading[] =>
  states.map((s, i) => ({ instance: `i${i}`, state: s, canCommit: s === "RUNNING" ? true : null }));
