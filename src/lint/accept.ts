/**
 * A warning a team accepts, with its reason, in the runbook itself (`accept:`), so that
 * `--max-warnings 0` stays usable in CI: the finding is still reported where it would be, as
 * `info` with "accepted: <reason>", and no longer counts as a warning. Errors are never accepted
 * (an error means "do not run"). An entry that matches no warning is a warning of its own: a
 * stale acceptance would hide the next finding of that rule.
 */
import type { Diagnostic } from "../diagnostics.js";
import { spanAt } from "../runbook/view.js";
import type { LintContext, RuleInfo } from "./context.js";

export const rules = [
  {
    id: "accept-unused",
    severity: "warning",
    description:
      "An `accept:` entry that matches no warning of its rule (in its step, when it names one): the finding was fixed, or the entry names the wrong rule or step.",
    spec: "A warning the team accepts, with the reason: the finding is still reported where it would be, marked accepted with the reason, and no longer counts as a warning",
    source: "runbook.schema.json",
    hint: "Remove the entry, or name the rule id (`syncbook lint --list-rules`) and the step id the warning is at. Errors cannot be accepted: fix them.",
  },
] as const satisfies readonly RuleInfo[];

interface Accept {
  rule: string;
  step?: string;
  reason: string;
}

/** Turns each accepted warning into info with its reason; reports entries that match none. */
export function applyAccepts(ctx: LintContext, found: Diagnostic[]): Diagnostic[] {
  const accepts = (ctx.runbook as { accept?: Accept[] }).accept ?? [];
  if (accepts.length === 0) return found;
  const steps = ctx.runbook.steps;
  const lines = (id: string): { from: number; to: number } | undefined => {
    const i = steps.findIndex((s) => s.id === id);
    if (i < 0) return undefined;
    const span = spanAt(ctx.loaded, ["steps", i], false);
    return { from: span.line, to: span.endLine ?? span.line };
  };
  const used = new Set<number>();
  const out = found.map((d) => {
    if (d.severity !== "warning") return d;
    const at = accepts.findIndex((a) => {
      if (a.rule !== d.rule) return false;
      if (a.step === undefined) return true;
      const r = lines(a.step);
      return r !== undefined && d.line >= r.from && d.line <= r.to;
    });
    if (at < 0) return d;
    used.add(at);
    const a = accepts[at]!;
    return {
      ...d,
      severity: "info" as const,
      message: `${d.message} (accepted in the runbook: ${a.reason})`,
      accepted: a.reason,
    };
  });
  accepts.forEach((a, i) => {
    if (used.has(i)) return;
    const error = found.some((d) => d.rule === a.rule && d.severity === "error");
    ctx.report(
      "accept-unused",
      ["accept", i, "rule"],
      error
        ? `\`${a.rule}\` is an error here: errors cannot be accepted (an error means the runbook must not run).`
        : `No \`${a.rule}\` warning${a.step !== undefined ? ` in step \`${a.step}\`` : ""} to accept: this entry would hide the next one.`,
    );
  });
  return out;
}
