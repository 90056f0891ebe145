/**
 * What lint's rule families ask of a runbook's steps, through their kinds' traits (src/steps):
 * the start requests, the conditions, the hook calls, the verifier's users. Never by a kind's name
 * (`test/steps/kind-names.test.ts`): a finding's place is the step's own kind key.
 */
import type { AssertBody, Runbook, StartRequest, WaitForBody } from "../runbook/types.js";
import { bindStep, type BoundStep } from "../steps/index.js";
import type { YamlPath } from "./context.js";

export interface LintStep {
  index: number;
  bound: BoundStep;
  /** The step's kind key: `["steps", i, kind]`. */
  at: YamlPath;
}

export function lintSteps(rb: Runbook): LintStep[] {
  return rb.steps.map((s, index) => {
    const bound = bindStep(s);
    return { index, bound, at: ["steps", index, bound.kind] };
  });
}

/** What the helpers below read: the bound steps (`LintContext.steps`). */
interface Bound {
  readonly steps: readonly LintStep[];
}

/** Every start request the runbook sends, at its place. */
export function startRequests(ctx: Bound): { request: StartRequest; at: YamlPath }[] {
  return ctx.steps.flatMap((s) => {
    const request = s.bound.startRequest();
    return request ? [{ request, at: s.at }] : [];
  });
}

/** Every condition a step reads on the fleet, at its place. */
export function conditions(ctx: Bound): { condition: WaitForBody | AssertBody; at: YamlPath; kind: string }[] {
  return ctx.steps.flatMap((s) => {
    const condition = s.bound.condition();
    return condition ? [{ condition, at: s.at, kind: s.bound.kind }] : [];
  });
}
