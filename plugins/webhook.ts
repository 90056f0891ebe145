/**
 * `webhook`: a notifier that POSTs each notification as JSON.
 *
 * ```yaml
 * notify:
 *   - { use: webhook, with: { url: "${env.OPS_WEBHOOK}" }, on: [run.started, step.failed, run.finished] }
 * steps:
 *   - notify: { use: webhook, with: { url: "${env.OPS_WEBHOOK}", text: "sales cutover committed" } }
 * ```
 *
 * Body: `{ "source": "syncbook", "runbook", "text", "severity", "event": { type, seq, at, … } }`
 * (`event` is the run event, already redacted, or `{ type: "notify", text, index, id, at }`).
 */
import {
  definePlugin,
  DURATION_SCHEMA,
  durationOr,
  NOTIFY_TEXT_SCHEMA,
  retriesSchema,
  sendHttp,
} from "../src/plugin/public.js";

export interface WebhookOptions {
  url: string;
  method?: "POST" | "PUT";
  headers?: Record<string, string>;
  text?: string;
  retries?: number;
  timeout?: string | number;
}

export default definePlugin<WebhookOptions>({
  name: "webhook",
  description: "POST each notification as JSON to a URL.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: {
        type: "string",
        format: "uri",
        description: "Where to POST (usually `${env.NAME}`: webhook URLs are secrets).",
      },
      method: { enum: ["POST", "PUT"], default: "POST", description: "HTTP method (default POST)." },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Extra headers (e.g. an Authorization with `${env.*}`); never logged.",
      },
      text: NOTIFY_TEXT_SCHEMA,
      retries: retriesSchema(1),
      timeout: { ...DURATION_SCHEMA, description: "Time limit of one attempt (default 10s)." },
    },
  },
  notifiers: {
    webhook: async (n, ctx) => {
      const o = ctx.options;
      await sendHttp({
        url: o.url,
        method: o.method ?? "POST",
        headers: o.headers ?? {},
        body: { source: "syncbook", runbook: ctx.runbook.name, text: ctx.text, severity: ctx.severity, event: n },
        retries: o.retries ?? 1,
        retryDelayMs: 500,
        timeoutMs: durationOr(o.timeout, 10_000),
        signal: ctx.signal,
        redact: ctx.redact,
      });
    },
  },
});
