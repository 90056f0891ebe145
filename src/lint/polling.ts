/** How often the runner asks: a poll interval so short that the polls themselves load the service. */
import { durationMs, formatDuration } from "../runbook/duration.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { q } from "./context.js";
import { lintSteps } from "./kinds.js";

/**
 * The shortest poll interval lint accepts: 50 requests a second to each instance. `pollInterval: 0`
 * polled 665 times a second (issue 30); the write-stop window's default is 100ms, rehearsals use 50ms.
 */
export const MIN_POLL_INTERVAL_MS = 20;

const KEYS = new Set(["pollInterval", "windowPollInterval"]);

export const rules = [
  {
    id: "poll-interval-too-short",
    severity: "error",
    description: `A \`pollInterval\` or \`windowPollInterval\` under ${formatDuration(MIN_POLL_INTERVAL_MS)}: the runner would poll each instance (or the verifier) hundreds of times a second.`,
    spec: "Time between progress polls (duration). Default 2s.",
    source: "runbook.schema.json",
    hint: `Poll at ${formatDuration(MIN_POLL_INTERVAL_MS)} or slower (the default is 2s; the write-stop window polls at 100ms by default).`,
  },
  {
    id: "check-wait-outlasts-step",
    severity: "warning",
    description:
      "A stopWrites `check:` whose `until` is not shorter than its step's time limit: the step fails at its limit before the check's wait is over.",
    spec: "Read again until the check holds, at most this long (duration, e.g. `2m`)",
    source: "runbook.schema.json",
    hint: "Give the step a `timeout` longer than the check's `until` plus one read, or wait less.",
  },
  {
    id: "check-poll-without-until",
    severity: "warning",
    description:
      "A stopWrites `check:` with a `pollInterval` but no `until`: it reads once, so the interval is never used.",
    spec: "With `until`: time between reads (duration; default 2s).",
    source: "runbook.schema.json",
    hint: "Add `until:` (how long the check may wait for the switch to reach every application instance), or drop `pollInterval`.",
  },
] as const satisfies readonly RuleInfo[];

/** A step's time limit when neither it nor `defaults` sets one (the schema's `defaults.timeout`). */
const STEP_TIMEOUT_MS = 30 * 60_000;

/** A write stop's check (the step kind's `writesCheck`, src/lint/kinds.ts): its wait against its step's time limit. */
function checkWaits(ctx: LintContext): void {
  const rb = ctx.runbook;
  const ms = (v: unknown): number | undefined =>
    typeof v === "string" || typeof v === "number" ? durationMs(v) : undefined;
  for (const s of lintSteps(rb)) {
    const c = s.bound.writesCheck() as { until?: unknown; pollInterval?: unknown } | undefined;
    if (!c || typeof c !== "object") continue;
    const at = [...s.at, "check"];
    const until = ms(c.until);
    if (c.until === undefined && c.pollInterval !== undefined)
      ctx.report(
        "check-poll-without-until",
        [...at, "pollInterval"],
        "This check has a `pollInterval` but no `until`: it reads once, and the interval is never used.",
      );
    const limit =
      ms((rb.steps[s.index] as { timeout?: unknown }).timeout) ?? ms(rb.defaults?.timeout) ?? STEP_TIMEOUT_MS;
    if (until !== undefined && until >= limit)
      ctx.report(
        "check-wait-outlasts-step",
        [...at, "until"],
        `The check waits up to ${formatDuration(until)}, but its step fails at its time limit of ${formatDuration(limit)}: the wait would never end as written.`,
      );
  }
}

export function check(ctx: LintContext): void {
  checkWaits(ctx);
  const walk = (v: unknown, path: YamlPath): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, [...path, i]));
    if (v === null || typeof v !== "object") return;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      // a plugin's options are its own: a `pollInterval` there means what the plugin says
      if (k === "with") continue;
      if (KEYS.has(k) && (typeof x === "string" || typeof x === "number")) {
        const msValue = durationMs(x);
        if (msValue !== undefined && msValue < MIN_POLL_INTERVAL_MS)
          ctx.report(
            "poll-interval-too-short",
            [...path, k],
            `${k}: ${q(String(x))} polls ${msValue === 0 ? "without pause" : `${Math.round(1000 / msValue)} times a second`}; the shortest accepted is ${formatDuration(MIN_POLL_INTERVAL_MS)}.`,
          );
      } else walk(x, [...path, k]);
    }
  };
  walk(ctx.runbook, []);
}
