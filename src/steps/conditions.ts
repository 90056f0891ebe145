/** Shared by waitFor and assert: what a condition needs and how it is described. */
import type { AssertBody, WaitForBody } from "../runbook/types.js";

const TIMING = new Set(["pollInterval", "slowAfter", "timeout", "on"]);

export function describeCondition(cond: WaitForBody | AssertBody): string {
  const parts = Object.entries(cond)
    .filter(([k]) => !TIMING.has(k))
    .map(([k, v]) =>
      k === "expect"
        ? (v as { path: string }[])
            .map((e) => `${e.path} ${JSON.stringify({ ...e, path: undefined }).replace(/"path":undefined,?/, "")}`)
            .join(", ")
        : `${k} ${Array.isArray(v) ? v.map((x) => String(x as string)).join("|") : String(v as string)}`,
    );
  const on = cond.on && cond.on !== "all" ? ` (on ${cond.on})` : "";
  return `${parts.join(", ")}${on}`;
}

/** Whether the verifier's progress is needed (phase, failedTasks, `verifier.` paths). */
export function needsVerifier(cond: WaitForBody | AssertBody): boolean {
  return (
    cond.phase !== undefined ||
    cond.failedTasks !== undefined ||
    (cond.expect ?? []).some((e) => e.path.startsWith("verifier."))
  );
}
