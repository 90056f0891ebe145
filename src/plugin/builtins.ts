/**
 * The built-in plugins (`plugins/*.ts`) and the `use:` names each provides. The names are listed
 * here so that a runbook loads only the built-ins it uses (lint's start-up budget); a test checks
 * this table against what each module really exports.
 */
export interface BuiltinPlugin {
  /** File name in `plugins/` (and the plugin's name). */
  name: string;
  hooks?: readonly string[];
  notifiers?: readonly string[];
  load(): Promise<unknown>;
}

export const BUILTIN_PLUGINS: readonly BuiltinPlugin[] = [
  { name: "shell", hooks: ["shell"], load: () => import("../../plugins/shell.js") },
  { name: "http", hooks: ["http"], load: () => import("../../plugins/http.js") },
  {
    name: "sim-writes",
    hooks: ["sim-writes", "sim-writes-stopped"],
    load: () => import("../../plugins/sim-writes.js"),
  },
  { name: "webhook", notifiers: ["webhook"], load: () => import("../../plugins/webhook.js") },
  { name: "chat", notifiers: ["chat"], load: () => import("../../plugins/chat.js") },
  { name: "pagerduty", notifiers: ["pagerduty"], load: () => import("../../plugins/pagerduty.js") },
  { name: "teams", notifiers: ["teams"], load: () => import("../../plugins/teams.js") },
  { name: "file", notifiers: ["file"], load: () => import("../../plugins/file.js") },
  { name: "stdout", notifiers: ["stdout"], load: () => import("../../plugins/stdout.js") },
];
