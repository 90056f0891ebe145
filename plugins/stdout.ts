/**
 * `stdout`: a notifier that prints each notification on one line. A `notify` step written as a
 * plain string (`- notify: "sales is committed"`) uses it.
 *
 * ```yaml
 * notify:
 *   - { use: stdout, on: [run.started, commit.sent, wait.slow, run.finished] }
 * ```
 */
import { definePlugin, NOTIFY_TEXT_SCHEMA } from "../src/plugin/public.js";

export interface StdoutOptions {
  text?: string;
  format?: "text" | "json";
}

const MARK = { info: "i", warning: "!", error: "x", critical: "!!" } as const;

export default definePlugin<StdoutOptions>({
  name: "stdout",
  description: "Print each notification on one line.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    properties: {
      text: NOTIFY_TEXT_SCHEMA,
      format: {
        enum: ["text", "json"],
        default: "text",
        description: "`text` (a sentence) or `json` (the notification as one JSON line).",
      },
    },
  },
  notifiers: {
    stdout: (n, ctx) => {
      if (ctx.options.format === "json")
        ctx.print(
          ctx.redact(JSON.stringify({ runbook: ctx.runbook.name, text: ctx.text, severity: ctx.severity, event: n })),
        );
      else ctx.print(`[notify ${MARK[ctx.severity]}] ${new Date(n.at).toISOString()} ${ctx.text}`);
    },
  },
});
