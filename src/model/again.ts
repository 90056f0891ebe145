/**
 * The step a `--from` run runs again in a cutover that committed: its last run finished ok at the
 * runbook's end, past a step after the runbook's last commit step that failed (`continueOnError`:
 * a verify whose verifier did not answer). `syncbook run x.yaml --from <it>` continues that
 * cutover, its commit counted (src/run/earlier.ts `afterItsCommit`, the same rule on the journal;
 * it also needs the runbook's text unchanged, or `--allow-changed-runbook`, which `status` adds). One rule for every reader that names the way on: `status`, the watch page.
 */
import type { WindowKindTraits } from "../fleet/window.js";
import type { CutoverModel, ModelStep } from "./contract.js";

/** Step `index` comes after the last of `steps` whose kind sends commit (none: no step does). */
export function afterLastCommitStep(
  steps: readonly { index: number; kind: string }[],
  traits: WindowKindTraits,
  index: number,
): boolean {
  const commits = steps.filter((s) => traits(s.kind).command === "commit").map((s) => s.index);
  return commits.length > 0 && index > Math.max(...commits);
}

export function runAgainAfterCommit(m: CutoverModel, traits: WindowKindTraits): ModelStep | undefined {
  const run = m.runs.at(-1);
  if (!run || run.outcome !== "ok" || run.to !== undefined || run.aborted || run.committed !== true) return undefined;
  return m.steps.find((s) => s.outcome === "failed" && afterLastCommitStep(m.steps, traits, s.index));
}
