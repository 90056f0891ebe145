/**
 * `chat`: a notifier for chat incoming webhooks with the Slack-compatible payload
 * (`{ text, blocks }`), which Slack, Mattermost, Rocket.Chat and others accept.
 *
 * ```yaml
 * notify:
 *   - use: chat
 *     with: { url: "${env.CHAT_WEBHOOK}", mention: "@dba-oncall" }
 *     on: [run.started, step.failed, wait.slow, commit.sent, run.finished]
 * ```
 */
import {
  definePlugin,
  DURATION_SCHEMA,
  durationOr,
  type NotificationSeverity as Severity,
  NOTIFY_TEXT_SCHEMA,
  sendHttp,
} from "../src/plugin/public.js";

export interface ChatOptions {
  url: string;
  text?: string;
  channel?: string;
  username?: string;
  iconEmoji?: string;
  mention?: string;
  mentionOn?: Severity[];
  blocks?: boolean;
  timeout?: string | number;
}

const ICON: Record<Severity, string> = {
  info: ":information_source:",
  warning: ":warning:",
  error: ":x:",
  critical: ":rotating_light:",
};

/** Slack mrkdwn needs &, < and > escaped. */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The Slack-compatible payload of one notification. */
export function chatPayload(
  text: string,
  severity: Severity,
  o: Omit<ChatOptions, "url">,
  meta: { runbook: string; event: string; at: number },
): Record<string, unknown> {
  const mention = o.mention && (o.mentionOn ?? ["error", "critical"]).includes(severity) ? `${o.mention} ` : "";
  const line = `${ICON[severity]} ${mention}${escapeMrkdwn(text)}`;
  const payload: Record<string, unknown> = { text: line };
  if (o.blocks !== false) {
    payload.blocks = [
      { type: "section", text: { type: "mrkdwn", text: line } },
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: escapeMrkdwn(`syncbook · ${meta.runbook} · ${meta.event} · ${new Date(meta.at).toISOString()}`),
          },
        ],
      },
    ];
  }
  if (o.channel) payload.channel = o.channel;
  if (o.username) payload.username = o.username;
  if (o.iconEmoji) payload.icon_emoji = o.iconEmoji;
  return payload;
}

export default definePlugin<ChatOptions>({
  name: "chat",
  description: "Post to a chat incoming webhook (Slack-compatible payload).",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: { type: "string", format: "uri", description: "The incoming-webhook URL (a secret: write `${env.NAME}`)." },
      text: NOTIFY_TEXT_SCHEMA,
      channel: { type: "string", description: "Channel override (honoured by some chat servers)." },
      username: { type: "string", description: "Sender name override." },
      iconEmoji: { type: "string", description: "Sender icon, e.g. `:robot_face:`." },
      mention: { type: "string", description: "Prepended to loud messages, e.g. `<!here>` or `@dba-oncall`." },
      mentionOn: {
        type: "array",
        items: { enum: ["info", "warning", "error", "critical"] },
        description: "Severities that get the mention (default error and critical).",
      },
      blocks: {
        type: "boolean",
        default: true,
        description: "Send Block Kit `blocks` besides `text` (default true; set false for servers that reject them).",
      },
      timeout: { ...DURATION_SCHEMA, description: "Time limit of the request (default 10s)." },
    },
  },
  notifiers: {
    chat: async (n, ctx) => {
      const { url, timeout, ...rest } = ctx.options;
      await sendHttp({
        url,
        method: "POST",
        body: chatPayload(ctx.text, ctx.severity, rest, { runbook: ctx.runbook.name, event: n.type, at: n.at }),
        retries: 1,
        retryDelayMs: 500,
        timeoutMs: durationOr(timeout, 10_000),
        signal: ctx.signal,
        redact: ctx.redact,
      });
    },
  },
});
