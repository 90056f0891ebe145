/**
 * The step a `--from` run runs again in a cutover that committed: its last run finished ok at the
 * runbook's end, past a step after the runbook's last commit step that failed (`continueOnError`:
 * a verify whose verifier did not answer). `syncbook run x.yaml --from <it>` continues that
 * cutover, its commit counted (src/run/earlier.ts `afterItsCommit`, the same rule on the journal;
 * it also needs the runbook's text unchanged, or `--allow-changed-runbook`, which `status` adds). One rule for every reader that names the way on: `status`, the watch page.
 */
import type { WindowKindTraits } from "../fleet/window.js";
import type { CutoverModel, ModelRun, ModelStep } from "./contract.js";

/** Step `index` comes after the last of `steps` whose kind sends commit (none: no step does). */
export function afterLastCommitStep(
  steps: readonly { index: number; kind: string }[],
  traits: WindowKindTraits,
  index: number,
): boolean {
  const commits = steps.filter((s) => traits(s.kind).command === "commit").map((s) => s.index);
  return commits.length > 0 && index > Math.max(...commits);
}

/**
 * The stopWrites step a step refused for want of a write stop (commit's `writes-stopped`
 * interlock) needs run again: the last one before it, else the first; none for a step after the
 * last commit (a verify's writesOff: stopping writes again leads to a commit already made, whose
 * readiness wait then waits for canCommit on a COMMITTED fleet until its time limit). `at`: the
 * refused step's index, or -1 when it is not known. The way on the run's last word, `status` and
 * the watch page name (`--resume` would meet the same refusal).
 */
export function stopAgainBefore<S extends { index: number; kind: string }>(
  steps: readonly S[],
  traits: WindowKindTraits,
  at: number,
): S | undefined {
  if (at >= 0 && afterLastCommitStep(steps, traits, at)) return undefined;
  const stops = steps.filter((s) => traits(s.kind).opensWriteStop);
  return stops.filter((s) => at < 0 || s.index < at).at(-1) ?? stops[0];
}

/**
 * Whether a step that asks the `stopped-in-commit` interlock (src/steps/kit/stopped-in-commit.ts:
 * a writes-on hook, a verify, the kind that waits for the verifier) is still ahead of a plain
 * `--resume`: one that has not ended ok and is not skipped by its `when`, as the cutover's values
 * decide it (`values`: the model's `cutoverValues.vars`, what the resume must be given; a review:
 * the runbook's default decided it, and status offered a plain `--resume` that was refused again),
 * else as its run journaled a skip. The one rule of `status` and the watch page: they offer the
 * restart and the forced resume instead of a plain `--resume` only then (a review: a runbook with
 * neither step, or with its verify skipped, was offered them).
 */
export function stoppedInCommitAhead(
  steps: readonly Pick<ModelStep, "index" | "kind" | "outcome" | "reason" | "writesOn" | "when">[],
  traits: (kind: string | undefined) => { readonly waitsFor: string | undefined },
  values?: Readonly<Record<string, string | number | boolean>>,
): boolean {
  return steps.some((s) => (s.writesOn === true || traits(s.kind).waitsFor === "verifier") && stillAhead(s, values));
}

/**
 * Whether a commit step is still ahead of a plain `--resume` (`stillAhead`, as `stoppedInCommitAhead`
 * judges its steps): `status` offers no `--resume` that would send a commit while an earlier
 * cutover's may still take effect (src/run/earlier.ts `refuseSentByEarlierCutover` refuses it).
 */
export function commitAhead(
  steps: readonly Pick<ModelStep, "index" | "kind" | "outcome" | "reason" | "when">[],
  traits: (kind: string | undefined) => { readonly command?: string | undefined },
  values?: Readonly<Record<string, string | number | boolean>>,
): boolean {
  // a step its run skipped as before its --from: a --resume of that run does not come back to it
  return steps.some(
    (s) =>
      traits(s.kind).command === "commit" &&
      !(s.outcome === "skipped" && s.reason === "before --from") &&
      stillAhead(s, values),
  );
}

/** Not ended ok, and not skipped by its `when`: as the cutover's values decide it, else as its run journaled a skip. */
function stillAhead(
  s: Pick<ModelStep, "outcome" | "reason" | "when">,
  values: Readonly<Record<string, string | number | boolean>> | undefined,
): boolean {
  if (s.outcome === "ok") return false;
  const decided = s.when !== undefined ? values?.[s.when] : undefined;
  if (decided !== undefined) return decided !== false && decided !== "false";
  return !(s.outcome === "skipped" && s.reason === "when: false");
}

export function runAgainAfterCommit(m: CutoverModel, traits: WindowKindTraits): ModelStep | undefined {
  const run = m.runs.at(-1);
  if (!run || run.outcome !== "ok" || run.to !== undefined || run.aborted || run.committed !== true) return undefined;
  return m.steps.find((s) => s.outcome === "failed" && afterLastCommitStep(m.steps, traits, s.index));
}

/**
 * The step attempted last: the latest attempt's run, then its start within that run, not the
 * furthest step attempted (a `--from` run that failed before the step an earlier run reached: a
 * review saw status name the earlier run's step as the last, and the page miss the failure's
 * hint). Runs in their journal order, not by clock: a later run on a host whose clock is behind
 * is still the later (a review stepped one back 10 minutes). `upTo`: only attempts in runs up to
 * and including it count (`resumedRun`: where `--resume` goes on, not a later run it passes over).
 * One rule for status and the page.
 */
export function lastAttempted<S extends Pick<ModelStep, "index" | "attempts">>(
  steps: readonly S[],
  upTo?: number,
): S | undefined {
  return lastAttempt(steps, upTo)?.step;
}

/** `lastAttempted`'s step with that attempt of it (its outcome then, not a later run's). */
function lastAttempt<S extends Pick<ModelStep, "index" | "attempts">>(
  steps: readonly S[],
  upTo: number | undefined,
): { step: S; attempt: S["attempts"][number] } | undefined {
  let last: { step: S; attempt: S["attempts"][number] } | undefined;
  for (const s of steps) {
    const a = s.attempts.filter((x) => upTo === undefined || x.run <= upTo).at(-1);
    if (a === undefined) continue;
    const b = last?.attempt;
    if (b === undefined || a.run > b.run || (a.run === b.run && a.startedAt >= b.startedAt))
      last = { step: s, attempt: a };
  }
  return last;
}

/**
 * The run a `--resume` goes on from: the last run of the journal it continues. `--resume` passes
 * over the journals whose runs neither sent nor ran a hook (`acted`, src/journal/read.ts
 * `chooseJournal`) and continues the last run that acted, with every `--resume` (an `--abort`
 * too) after it, which continued that journal (a later run that is no resume wrote a journal of
 * its own, which sent nothing). None acted: the last run. A review: after a failure whose way on
 * needs flags, a `--from x --to x` run that sent nothing made the page and that run's end offer a
 * plain `--resume`, refused again, where status offered the failure's. The one rule of status,
 * the watch page and a `--to` run's end.
 */
export function resumedRun(runs: readonly Pick<ModelRun, "n" | "mode" | "acted">[]): number | undefined {
  const acted = runs.findLastIndex((r) => r.acted === true);
  if (acted < 0) return runs.at(-1)?.n;
  return runs.slice(acted + 1).findLast((r) => r.mode === "resume")?.n ?? runs[acted]!.n;
}

/**
 * What the `--resume` that runs the last step again needs done first, as its failure said: a hint
 * its step marked so (src/steps/kit/context.ts `StepFailure.beforeResume`: restart the verifier,
 * check the fleet by hand) of the run `--resume` goes on from (`resumed`: `resumedRun`), else none;
 * `flags`: what that `--resume` needs once it is done (`StepFailure.resumeFlags`). Only the
 * attempts of runs up to it count: a later run it passes over (a `--from x --to x` that sent
 * nothing) is not where it goes on. One rule for status, the watch page and a `--to` run's end.
 */
export function resumeFirst(
  steps: readonly Pick<
    ModelStep,
    "index" | "id" | "outcome" | "attempts" | "hint" | "hintBeforeResume" | "resumeFlags"
  >[],
  resumed: number | undefined,
): { number: number; id: string; hint: string; flags?: string[] } | undefined {
  const last = lastAttempt(steps, resumed);
  const s = last?.step;
  // that run's failure only: an earlier run's (a --to run after it stopped short of that step)
  // is not where the resume goes on (a review saw a commit's hint from the run before)
  return s !== undefined &&
    last?.attempt.outcome === "failed" &&
    last.attempt.run === resumed &&
    s.hint !== undefined &&
    s.hintBeforeResume === true
    ? { number: s.index + 1, id: s.id, hint: s.hint, ...(s.resumeFlags ? { flags: s.resumeFlags } : {}) }
    : undefined;
}

/**
 * A run's own command again, as the arguments after `syncbook run <runbook>`: the flags that decide
 * what it may go on with (`--resume` and the journal it named, `--new-cutover`, `--from`, `--to`,
 * `--only` as typed, `--allow-changed-runbook`), not its `--var`s (a way on names the cutover's) nor
 * its `--force`s. The way on of a failure that `--resume` would refuse or pass over
 * (`StepFailure.againArgs`): the run journals it, its end and every reader name it (`runAgainFirst`).
 * Without `--allow-changed-runbook` a changed runbook is refused, and a `--resume` of a named journal
 * without its name resumes another (a review).
 */
export function ownCommandArgs(flags: {
  resume?: string | boolean | undefined;
  newCutover?: boolean | undefined;
  from?: string | undefined;
  to?: string | undefined;
  /** `--only` as a way on repeats it (src/run/plan.ts `onlyAsOffered`). */
  onlyArg?: string | undefined;
  allowChangedRunbook?: boolean | undefined;
}): string[] {
  // a --resume goes on where its journal says: no range of its own
  const which = flags.resume
    ? ["--resume", ...(typeof flags.resume === "string" ? [flags.resume] : [])]
    : [
        ...(flags.newCutover ? ["--new-cutover"] : []),
        ...(flags.from !== undefined ? ["--from", flags.from] : []),
        ...(flags.to !== undefined ? ["--to", flags.to] : []),
        ...(flags.onlyArg !== undefined ? ["--only", flags.onlyArg] : []),
      ];
  return [...which, ...(flags.allowChangedRunbook === true ? ["--allow-changed-runbook"] : [])];
}

/**
 * The failed run's own command again, where its failure says that is the way on
 * (`ModelStep.againArgs`): the step attempted last failed in the cutover's last run with it, its
 * hint (what to do first) and its arguments after the runbook. Not a later run's (an `--abort`, a
 * run that failed otherwise) business. A plain `--resume` there is refused (a corrected
 * `instances:` list) or passes that run over for the last run that acted (a review: status and the
 * page offered it, the run's end this command). One rule for status and the watch page.
 */
export function runAgainFirst(
  steps: readonly Pick<ModelStep, "index" | "id" | "attempts" | "hint" | "againArgs">[],
  runs: readonly Pick<ModelRun, "n">[],
): { number: number; id: string; hint: string; args: string[] } | undefined {
  const last = lastAttempt(steps, undefined);
  const s = last?.step;
  return s !== undefined &&
    last?.attempt.outcome === "failed" &&
    last.attempt.run === runs.at(-1)?.n &&
    s.hint !== undefined &&
    s.againArgs !== undefined
    ? { number: s.index + 1, id: s.id, hint: s.hint, args: [...s.againArgs] }
    : undefined;
}
