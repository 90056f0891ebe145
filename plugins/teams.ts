/**
 * `teams`: Microsoft Teams through a Workflows webhook ("When a Teams webhook request is
 * received"), one Adaptive Card per notification. The Workflows webhook replaced the retired
 * Office 365 connectors; it takes a `message` whose attachment is the card, and answers 202.
 *
 * ```yaml
 * notify:
 *   - use: teams
 *     with: { url: "${env.TEAMS_WEBHOOK}", mention: "DBA on call" }
 *     on: [run.started, step.failed, wait.slow, commit.sent, run.finished]
 * ```
 */
import {
  definePlugin,
  DURATION_SCHEMA,
  durationOr,
  type NotificationSeverity as Severity,
  NOTIFY_TEXT_SCHEMA,
  retriesSchema,
  sendHttp,
} from "../src/plugin/public.js";

export interface TeamsOptions {
  url: string;
  text?: string;
  /** A line of text put first on loud cards (a Workflows card cannot @-mention by name). */
  mention?: string;
  mentionOn?: Severity[];
  timeout?: string | number;
  retries?: number;
}

/** Adaptive Card colours by severity (the card's own palette). */
const COLOR: Record<Severity, string> = {
  info: "Default",
  warning: "Warning",
  error: "Attention",
  critical: "Attention",
};

/** The Workflows webhook body of one notification: a `message` with one Adaptive Card. */
export function teamsPayload(
  text: string,
  severity: Severity,
  o: Pick<TeamsOptions, "mention" | "mentionOn">,
  meta: { runbook: string; cutover?: string; event: string; at: number },
): Record<string, unknown> {
  const loud = o.mention !== undefined && (o.mentionOn ?? ["error", "critical"]).includes(severity);
  const body: Record<string, unknown>[] = [];
  if (loud) body.push({ type: "TextBlock", text: o.mention, weight: "Bolder", wrap: true });
  body.push({
    type: "TextBlock",
    text,
    wrap: true,
    color: COLOR[severity],
    weight: severity === "info" ? "Default" : "Bolder",
  });
  body.push({
    type: "FactSet",
    facts: [
      { title: "Runbook", value: meta.runbook },
      ...(meta.cutover ? [{ title: "Cutover", value: meta.cutover }] : []),
      { title: "Event", value: meta.event },
      { title: "Severity", value: severity },
      { title: "At", value: new Date(meta.at).toISOString() },
    ],
  });
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body,
        },
      },
    ],
  };
}

export default definePlugin<TeamsOptions>({
  name: "teams",
  description: "Post an Adaptive Card to a Microsoft Teams Workflows webhook.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: {
        type: "string",
        format: "uri",
        description: "The Workflows webhook URL (a secret: its signature grants posting; write `${env.NAME}`).",
      },
      text: NOTIFY_TEXT_SCHEMA,
      mention: { type: "string", description: "A first line on loud cards, e.g. `DBA on call`." },
      mentionOn: {
        type: "array",
        items: { enum: ["info", "warning", "error", "critical"] },
        description: "Severities that get the mention line (default error and critical).",
      },
      retries: retriesSchema(1),
      timeout: { ...DURATION_SCHEMA, description: "Time limit of one attempt (default 10s)." },
    },
  },
  notifiers: {
    teams: async (n, ctx) => {
      const { url, timeout, retries, ...rest } = ctx.options;
      await sendHttp({
        url,
        method: "POST",
        body: teamsPayload(ctx.text, ctx.severity, rest, {
          runbook: ctx.runbook.name,
          ...(ctx.cutover ? { cutover: ctx.cutover } : {}),
          event: n.type,
          at: n.at,
        }),
        retries: retries ?? 1,
        retryDelayMs: 500,
        timeoutMs: durationOr(timeout, 10_000),
        signal: ctx.signal,
        redact: ctx.redact,
      });
    },
  },
});
