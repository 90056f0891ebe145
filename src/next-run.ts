/**
 * The ways on that the run's end, `syncbook status` (human and `--json`) and the report offer: each
 * a `syncbook run <runbook>` with its arguments, and what that run does. Data first, words from it:
 * `status --json` carries the same commands its human form prints.
 */

import { MASK } from "./redact.js";
import { shellCommand } from "./text.js";

/** One way on: the arguments after `syncbook run <runbook>`, and what that run does. */
export interface NextRun {
  args: string;
  does: string;
}

/** The offer: the runs (one, or one of several), and what is not offered, with why. */
export interface NextOffer {
  runs: NextRun[];
  notes?: string[];
}

/**
 * An offer in lines: "next:" over one run, "next, one of:" over several, each command and, indented
 * under it, what it does; its notes after.
 */
export function nextLines(file: string, offer: NextOffer): string[] {
  return [
    offer.runs.length === 1 ? "next:" : "next, one of:",
    ...offer.runs.flatMap((r) => [`  syncbook run ${file} ${r.args}`, `      ${r.does}`]),
    ...(offer.notes ?? []).map((n) => `  (${n})`),
  ];
}

/**
 * After an undo of a stopWrites failed, `--abort` first: it retries the undo. `resumeAt` is the
 * step a `--resume` continues at, when known.
 */
export function nextAfterFailedUndo(
  step: { number: number; id: string },
  resumeAt?: { number: number; id: string },
): NextOffer {
  return {
    runs: [
      {
        args: "--abort",
        does: `retries the undos still owed, last first (step ${step.number} ${step.id}: turns writes back on) and calls the cutover off; nothing is sent to the sync service`,
      },
      {
        args: "--resume",
        does: `goes on with the cutover once what failed is fixed: step ${step.number} ${step.id} runs again (writes stay stopped), then ${resumeAt ? `step ${resumeAt.number} ${resumeAt.id}` : "the step that failed"} and on; the failed undo is not retried`,
      },
    ],
  };
}

/** Why a `--resume` offered may be refused: the runbook is not the text its journal ran. */
export const RUNBOOK_CHANGED_NOTE =
  "the runbook changed since this journal was written: --resume refuses it unless --allow-changed-runbook, only if the change cannot affect the steps already run";

/**
 * The `--var` values a way on must carry, as arguments after the others (` --var rollback=true`),
 * quoted for a shell; "" for none. A run with other values than its cutover's is refused
 * (src/run/earlier.ts `whenDecidedOtherwise`).
 */
export const varArgs = (vars: readonly string[]): string =>
  vars.length ? ` ${shellCommand(vars.flatMap((v) => ["--var", v]))}` : "";

/**
 * The `--var` values a cutover's runs decided their `when`s with, from each decision a step
 * tells (a step whose `when` names a variable: skipped by it, false; ran, true), in the order
 * first told: `name=value` for each variable every decision agrees on. One decided both ways is
 * left out: no value is right for both.
 */
export function decidedVars(decisions: Iterable<{ name: string; value: boolean }>): string[] {
  const seen = new Map<string, boolean | undefined>();
  for (const { name, value } of decisions)
    seen.set(name, seen.has(name) && seen.get(name) !== value ? undefined : value);
  return [...seen].flatMap(([name, v]) => (v === undefined ? [] : [`${name}=${String(v)}`]));
}

/**
 * The `--var` values a way on carries: those its `when`s were decided with (`decidedVars`), then
 * each value the cutover's last run was given with `--var` (`run.started.given`, its value from
 * `run.started.vars`): its hooks' calls, and so their undos, were made of them. One a `when`
 * decided is not repeated; a redacted one (`***`) cannot be offered, and the run that lacks it
 * is refused where an undo needs it (src/run/earlier.ts `undoVarsDiffer`).
 */
export function wayOnVars(
  decided: readonly string[],
  run: { vars?: Readonly<Record<string, string | number | boolean>>; given?: readonly string[] },
): string[] {
  const named = new Set(decided.map((v) => v.slice(0, v.indexOf("="))));
  const given = (run.given ?? []).flatMap((name) => {
    const value = run.vars?.[name];
    if (value === undefined || named.has(name) || String(value).includes(MASK)) return [];
    return [`${name}=${String(value)}`];
  });
  return [...decided, ...given];
}
