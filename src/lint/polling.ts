/** How often the runner asks: a poll interval so short that the polls themselves load the service. */
import { durationMs, formatDuration } from "../runbook/duration.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { q } from "./context.js";

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
] as const satisfies readonly RuleInfo[];

export function check(ctx: LintContext): void {
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
