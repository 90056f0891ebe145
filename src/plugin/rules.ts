/** The rules a plugin finding is reported under: what each id means, in one place. */
import type { RuleInfo } from "../diagnostics.js";
import { EVENT_NAMES } from "./events.js";

/** The plugin loader's and plugin-call checks' rule ids, entries of the rule catalogue (`src/lint/catalogue.ts`). */
export const PLUGIN_RULES = [
  {
    id: "plugin-load",
    severity: "error",
    description: "A `plugins:` entry is missing, fails to import, or does not export a plugin.",
    spec: "A plugin that is missing or fails to load is a lint error at the `plugins:` entry.",
    source: "DESIGN.md",
    hint: "Check the path (relative to the runbook) or install the package; its default export must be definePlugin({...}).",
  },
  {
    id: "plugin-duplicate",
    severity: "error",
    description: "Two plugins provide the same plugin name or `use:` name.",
    spec: "Plugins are how syncbook fits each site without forking it.",
    source: "DESIGN.md",
    hint: "Rename one of the entries: a runbook's `use:` must name exactly one hook or notifier.",
  },
  {
    id: "plugin-unknown",
    severity: "error",
    description: "A `use:` names no hook or notifier of the built-ins or of the `plugins:` entries.",
    spec: "Hooks … notifiers … a plugin may add step kinds.",
    source: "DESIGN.md",
    hint: "Use a built-in (shell, http, sim-writes; stdout, webhook, chat, file) or add the plugin under `plugins:`.",
  },
  {
    id: "plugin-options",
    severity: "error",
    description: "A plugin call's `with:` fails the plugin's own JSON Schema.",
    spec: "A plugin's options are validated by its own JSON Schema through ajv.",
    source: "DESIGN.md",
    hint: "See the plugin's documentation for its options.",
  },
  {
    id: "plugin-not-loaded",
    severity: "info",
    description:
      "`syncbook lint` does not import a `plugins:` entry (its top-level code would run): the options of its hooks are checked when the runbook runs, or by `lint --load-plugins`.",
    spec: "Lint is a dry run: it sends nothing and runs nothing of the runbook's.",
    source: "DESIGN.md",
    hint: "Run `syncbook lint --load-plugins` to import the plugin (its top-level code runs) and check its options too.",
  },
  // A warning, not an error (issue 42 asked to consider requiring a check). What it warns of is a
  // process that hides from every means the runner has (its environment cleared and its session
  // left, or a job handed to another service); every other way an undo's process outlives its
  // runner is waited out, and where the runner cannot tell (another host or PID namespace, no
  // /proc) it refuses the commit unless a check exists (src/run/orphans.ts, commit's
  // `hook-processes` interlock), so no runbook commits on that guess whatever this rule's severity.
  // Lint sees only that the undo is a process, not that it hides: most are one foreground command
  // (a `curl` to the flag service) the runner waits out. An error could not be accepted, and a team
  // whose write switch cannot be read could not run at all; as a warning it fails a CI that lints
  // with `--max-warnings 0` (docs/ci.md) until the team adds a check or accepts it with its reason
  // in the runbook (`accept:`), which every report then shows. Nor would an error close the gap: a
  // check sees a hidden write-on only once it happened, before commit.
  {
    id: "undo-process-without-check",
    severity: "warning",
    description:
      "The `undo` of a `stopWrites` starts a process (`shell`, or a hook that declares `startsProcesses`) and the stopWrites has no `check:`: a process that outlives a killed runner and hides from it (it clears its environment and leaves its session) can turn writes back on behind a later commit, and only a check can see that. A warning: lint cannot tell an undo that hides from one that runs in the foreground; accept it with that reason, or add a check.",
    spec: "Nothing commits while a write-on may still happen; where that cannot be known, the runbook's `check:` decides.",
    source: "DESIGN.md",
    hint: "Add `check:` to the stopWrites step: a hook that reads the write switch and fails while writes flow (it runs after the stop and again right before every commit).",
  },
  {
    id: "notify-event",
    severity: "error",
    description: "A `notify[].on` names no run event.",
    spec: "Notifications fire on events chosen in the runbook's top-level `notify:` block.",
    source: "DESIGN.md",
    hint: `Events: ${EVENT_NAMES.join(", ")}.`,
  },
] as const satisfies readonly RuleInfo[];

export type PluginRule = (typeof PLUGIN_RULES)[number]["id"];
