/**
 * `file`: a notifier that appends each notification as one JSON line.
 *
 * ```yaml
 * notify:
 *   - { use: file, with: { path: out/notifications.jsonl }, on: [step.finished, wait.slow, run.finished] }
 * ```
 *
 * Line: `{ "at": ISO time, "runbook", "text", "severity", "event": { … } }`. The path is
 * relative to the runbook's folder; missing folders are created.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { definePlugin, NOTIFY_TEXT_SCHEMA } from "../src/plugin/public.js";

export interface FileOptions {
  path: string;
  text?: string;
}

export default definePlugin<FileOptions>({
  name: "file",
  description: "Append each notification to a file as one JSON line.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      path: {
        type: "string",
        minLength: 1,
        description: "The JSON-lines file, relative to the runbook's folder (created with its folders).",
      },
      text: NOTIFY_TEXT_SCHEMA,
    },
  },
  notifiers: {
    file: async (n, ctx) => {
      const path = resolve(ctx.cwd, ctx.options.path);
      await mkdir(dirname(path), { recursive: true });
      const line = JSON.stringify({
        at: new Date(n.at).toISOString(),
        runbook: ctx.runbook.name,
        text: ctx.text,
        severity: ctx.severity,
        event: n,
      });
      // one write per line, opened for appending: concurrent runs never interleave inside a line
      await appendFile(path, `${ctx.redact(line)}\n`, { encoding: "utf8", flag: "a" });
    },
  },
});
