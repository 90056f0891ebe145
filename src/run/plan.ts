/**
 * The plan: each step's id, kind and title, and for `--dry-run` every request in order, to which
 * instance, with its body. Nothing here sends anything.
 */
import type { Runbook, Step, StepKind } from "../runbook/types.js";
import { pluginStepKind, stepKind } from "../runbook/types.js";
import { describeCondition } from "../steps/conditions.js";

export interface PlannedStep {
  index: number;
  id: string;
  /** `plugin` for a step kind a plugin adds (`pluginKind` names it). */
  kind: StepKind | "plugin";
  pluginKind?: string;
  title: string;
  step: Step;
}

export interface PlannedRequest {
  step: string;
  method: "GET" | "POST";
  target: string;
  path: string;
  body?: unknown;
  note?: string;
}

/** `pluginTitle` gives a plugin step its plugin's title (the runner passes the registry's). */
export function planSteps(runbook: Runbook, pluginTitle?: (kind: string, options: unknown) => string): PlannedStep[] {
  return runbook.steps.map((step, index) => {
    const kind = stepKind(step);
    const pluginKind = pluginStepKind(step);
    if (kind === "plugin" && pluginKind)
      return {
        index,
        id: step.id ?? `${pluginKind}-${index + 1}`,
        kind,
        pluginKind,
        title: step.name ?? pluginTitle?.(pluginKind, (step as Record<string, unknown>)[pluginKind]) ?? pluginKind,
        step,
      };
    return {
      index,
      id: step.id ?? `${kind}-${index + 1}`,
      kind,
      title: step.name ?? defaultTitle(step, kind as StepKind),
      step,
    };
  });
}

function defaultTitle(step: Step, kind: StepKind): string {
  switch (kind) {
    case "start":
      return `Start the sync ${step.start?.source ?? "?"} → ${step.start?.destination ?? "?"}`;
    case "waitFor":
      return `Wait for ${step.waitFor ? describeCondition(step.waitFor) : "?"}`;
    case "assert":
      return `Assert ${step.assert ? describeCondition(step.assert) : "?"}`;
    case "verify":
      return "Verify the destination against the source";
    case "stopWrites":
      return `Stop application writes (${step.stopWrites?.use ?? "?"})`;
    case "commit":
      return "Commit";
    case "confirm":
      return typeof step.confirm === "string" ? step.confirm : (step.confirm?.message ?? "Confirm");
    case "notify":
      return typeof step.notify === "string" ? `Notify: ${step.notify}` : `Notify (${step.notify?.use ?? "?"})`;
    case "hook":
      return `Hook ${step.hook?.use ?? "?"}`;
    case "sleep":
      return `Sleep ${String(step.sleep)}`;
    default:
      return kind[0]?.toUpperCase() + kind.slice(1);
  }
}

/** Every request of the plan, in order (progress polls summarized once per step). */
export function planRequests(
  runbook: Runbook,
  steps: readonly PlannedStep[],
  redact: (s: string) => string,
): PlannedRequest[] {
  const instances = runbook.instances.map((i) => redact(typeof i === "string" ? i : i.url));
  const verifier = runbook.verifier ? redact(runbook.verifier) : "(no verifier)";
  const out: PlannedRequest[] = [];
  const each = (step: string, method: "GET" | "POST", path: string, body?: unknown, note?: string) => {
    for (const t of instances)
      out.push({ step, method, target: t, path, ...(body !== undefined ? { body } : {}), ...(note ? { note } : {}) });
  };
  for (const s of steps) {
    if (s.step.when === false) continue;
    switch (s.kind) {
      case "start":
        each(s.id, "GET", "/api/v1/progress", undefined, "interlock: every instance IDLE");
        each(s.id, "POST", "/api/v1/start", JSON.parse(redact(JSON.stringify(s.step.start))));
        break;
      case "commit":
        each(
          s.id,
          "GET",
          "/api/v1/progress",
          undefined,
          "interlock: RUNNING, canCommit true; writes stopped; no errors",
        );
        each(s.id, "POST", "/api/v1/commit", {});
        break;
      case "pause":
      case "resume":
      case "reverse":
        each(s.id, "GET", "/api/v1/progress", undefined, "interlock: state");
        each(s.id, "POST", `/api/v1/${s.kind}`, {});
        break;
      case "waitFor":
      case "assert":
        each(
          s.id,
          "GET",
          "/api/v1/progress",
          undefined,
          s.kind === "waitFor" ? "polled until the condition holds" : "read once",
        );
        break;
      case "plugin":
        out.push({
          step: s.id,
          method: "POST",
          target: `plugin step ${s.pluginKind ?? "?"}`,
          path: "",
          body: JSON.parse(redact(JSON.stringify((s.step as Record<string, unknown>)[s.pluginKind ?? ""] ?? {}))),
          note: "runs the plugin's step",
        });
        break;
      case "verify": {
        each(s.id, "GET", "/api/v1/progress", undefined, "polled until change event application");
        const v = s.step.verify ?? {};
        if (v.startCheck !== false)
          out.push({ step: s.id, method: "POST", target: verifier, path: "/api/v1/check", body: {} });
        if (v.writesOff)
          out.push({ step: s.id, method: "POST", target: verifier, path: "/api/v1/writesOff", body: {} });
        out.push({
          step: s.id,
          method: "GET",
          target: verifier,
          path: "/api/v1/progress",
          note: "polled until phase idle",
        });
        break;
      }
      default:
        break;
    }
  }
  return out;
}
