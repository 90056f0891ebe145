/**
 * The plan: each step's id, kind and title, and for `--dry-run` every request in order, to which
 * instance, with its body. Nothing here sends anything; each step kind says what it would send.
 */
import type { Runbook, Step, StepKind } from "../runbook/types.js";
import { instancesOf, pluginStepKind } from "../runbook/types.js";
import { bindStep, type BoundStep, type PlannedRequest } from "../steps/index.js";

export type { PlannedRequest };

export interface PlannedStep {
  index: number;
  id: string;
  /** `plugin` for a step kind a plugin adds (`pluginKind` names it). */
  kind: StepKind | "plugin";
  pluginKind?: string;
  title: string;
  step: Step;
  /** The step bound to its kind's definition. */
  bound: BoundStep;
}

/** `pluginTitle` gives a plugin step its plugin's title (the runner passes the registry's). */
export function planSteps(runbook: Runbook, pluginTitle?: (kind: string, options: unknown) => string): PlannedStep[] {
  return runbook.steps.map((step, index) => {
    const bound = bindStep(step);
    const pluginKind = pluginStepKind(step);
    if (bound.kind === "plugin" && pluginKind) {
      const title =
        step.name ?? pluginTitle?.(pluginKind, (step as Record<string, unknown>)[pluginKind]) ?? bound.title();
      return { index, id: step.id ?? `${pluginKind}-${index + 1}`, kind: bound.kind, pluginKind, title, step, bound };
    }
    return {
      index,
      id: step.id ?? `${bound.kind}-${index + 1}`,
      kind: bound.kind,
      title: step.name ?? bound.title(),
      step,
      bound,
    };
  });
}

/** Every request of the plan, in order (progress polls summarized once per step). */
export function planRequests(
  runbook: Runbook,
  steps: readonly PlannedStep[],
  redact: (s: string) => string,
): PlannedRequest[] {
  const to = {
    instances: instancesOf(runbook).map((i) => redact(i.url)),
    verifier: runbook.verifier ? redact(runbook.verifier) : "(no verifier)",
    redact,
    serviceVersion: runbook.serviceVersion,
  };
  return steps.filter((s) => s.step.when !== false).flatMap((s) => s.bound.plan(to).map((r) => ({ step: s.id, ...r })));
}
