/**
 * `pagerduty`: PagerDuty Events API v2. One alert per cutover: a failed step, a failed run, a
 * failed undo or a stalled wait **triggers** it; the run finishing well, or the operator calling
 * the cutover off (`--abort` with every undo done), **resolves** it; an operator's Ctrl-C is a
 * warning (a trigger only with `triggerFrom: warning`); a commit sent is posted as a **change
 * event** (the service's timeline shows when the cutover happened).
 *
 * ```yaml
 * notify:
 *   - use: pagerduty
 *     with: { routingKey: "${env.PD_ROUTING_KEY}" }
 *     on: [step.failed, wait.slow, hook.failed, commit.sent, run.finished]
 * ```
 *
 * The `dedup_key` is the cutover's (`ctx.cutover`: the same across `--resume`, `--abort` and a
 * `--from` run that continues the cutover), so a resumed run that fails again updates the open
 * alert instead of paging a second time, and its success resolves it. Events it has nothing to say about (e.g. a step that succeeded) send nothing.
 */
import {
  definePlugin,
  DURATION_SCHEMA,
  durationOr,
  type Notification,
  type NotificationSeverity,
  NOTIFY_TEXT_SCHEMA,
  retriesSchema,
  sendHttp,
} from "../src/plugin/public.js";

export interface PagerDutyOptions {
  routingKey: string;
  /** Base URL of the Events API (default https://events.pagerduty.com; a proxy or a stand-in). */
  url?: string;
  component?: string;
  group?: string;
  class?: string;
  /** Lowest severity that triggers (default `error`: `wait.slow`, a warning, pages only when set to `warning`). */
  triggerFrom?: NotificationSeverity;
  retries?: number;
  timeout?: string | number;
}

/** What one notification means to PagerDuty. */
export type PagerDutyAction = "trigger" | "resolve" | "change" | "none";

const RANK: Record<NotificationSeverity, number> = { info: 0, warning: 1, error: 2, critical: 3 };

/** The action a notification asks for (pure: the plugin's whole policy, tested on its own). */
export function pagerDutyAction(
  n: Notification,
  severity: NotificationSeverity,
  triggerFrom: NotificationSeverity = "error",
): PagerDutyAction {
  if (n.type === "commit.sent") return "change";
  // a cutover that finished, or that the operator called off with every undo done, is over: its alert too
  if (n.type === "run.finished" && (n.outcome === "ok" || (n.aborted === true && n.exitCode === 0))) return "resolve";
  if (n.type === "wait.slow") return RANK.warning >= RANK[triggerFrom] ? "trigger" : "none";
  return RANK[severity] >= RANK[triggerFrom] && RANK[severity] >= RANK.warning ? "trigger" : "none";
}

/** The Events API body of one notification (`routing_key` included: the caller redacts logs). */
export function pagerDutyBody(
  action: Exclude<PagerDutyAction, "none">,
  o: PagerDutyOptions,
  m: { text: string; severity: NotificationSeverity; runbook: string; cutover: string; event: string; at: number },
): Record<string, unknown> {
  const timestamp = new Date(m.at).toISOString();
  if (action === "change")
    return {
      routing_key: o.routingKey,
      payload: {
        summary: m.text.slice(0, 1024),
        timestamp,
        source: `syncbook ${m.runbook}`,
        custom_details: { runbook: m.runbook, cutover: m.cutover, event: m.event },
      },
    };
  const body: Record<string, unknown> = {
    routing_key: o.routingKey,
    event_action: action,
    dedup_key: `syncbook:${m.runbook}:${m.cutover}`,
  };
  if (action === "trigger")
    body.payload = {
      summary: m.text.slice(0, 1024),
      source: `syncbook ${m.runbook}`,
      severity: m.severity,
      timestamp,
      ...(o.component ? { component: o.component } : {}),
      ...(o.group ? { group: o.group } : {}),
      ...(o.class ? { class: o.class } : {}),
      custom_details: { runbook: m.runbook, cutover: m.cutover, event: m.event },
    };
  return body;
}

export default definePlugin<PagerDutyOptions>({
  name: "pagerduty",
  description: "PagerDuty Events API v2: one alert per cutover (trigger, resolve), commits as change events.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["routingKey"],
    properties: {
      routingKey: {
        type: "string",
        minLength: 1,
        description: "The integration's routing key (a secret: write `${env.NAME}`).",
      },
      url: {
        type: "string",
        format: "uri",
        default: "https://events.pagerduty.com",
        description: "Base URL of the Events API (default https://events.pagerduty.com).",
      },
      component: { type: "string", description: "`payload.component` of the alert (e.g. the cluster)." },
      group: { type: "string", description: "`payload.group` of the alert (e.g. the wave)." },
      class: { type: "string", description: "`payload.class` of the alert." },
      triggerFrom: {
        enum: ["warning", "error", "critical"],
        default: "error",
        description:
          "Lowest severity that triggers the alert (default `error`; `warning` also pages on a stalled wait).",
      },
      text: NOTIFY_TEXT_SCHEMA,
      retries: retriesSchema(2),
      timeout: { ...DURATION_SCHEMA, description: "Time limit of one attempt (default 10s)." },
    },
  },
  notifiers: {
    pagerduty: async (n, ctx) => {
      const o = ctx.options;
      const action = pagerDutyAction(n, ctx.severity, o.triggerFrom);
      if (action === "none") return;
      const base = (o.url ?? "https://events.pagerduty.com").replace(/\/+$/, "");
      await sendHttp({
        url: `${base}${action === "change" ? "/v2/change/enqueue" : "/v2/enqueue"}`,
        method: "POST",
        body: pagerDutyBody(action, o, {
          text: ctx.text,
          severity: ctx.severity,
          runbook: ctx.runbook.name,
          cutover: ctx.cutover ?? ctx.runbook.name,
          event: n.type,
          at: n.at,
        }),
        expectStatus: "2xx",
        retries: o.retries ?? 2,
        retryDelayMs: 1000,
        timeoutMs: durationOr(o.timeout, 10_000),
        signal: ctx.signal,
        redact: (s) => ctx.redact(s.split(o.routingKey).join("***")),
      });
    },
  },
});
