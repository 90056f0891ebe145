/**
 * `shell`: a hook that runs one command — an argv list, never a shell string — e.g. a script
 * that switches the application's writes off, and (as the step's `undo:`) on again.
 *
 * ```yaml
 * - stopWrites:
 *     use: shell
 *     with:
 *       command: [node, hooks/app-writes.mjs, "off", "${vars.writeSwitch}"]
 *       env: { SWITCH_TOKEN: "${env.SWITCH_TOKEN}" }
 *       timeout: 1m
 *     undo: { use: shell, with: { command: [node, hooks/app-writes.mjs, "on", "${vars.writeSwitch}"] } }
 * ```
 *
 * - No shell parses `command`: `$HOME`, `;`, `|`, `*` reach the program as written. Write
 *   `[sh, -c, "…"]` yourself if you really want a shell.
 * - stdout and stderr go to the log line by line; every `env` value is treated as a secret and
 *   shown as `***` there and in errors (as is every `${env.*}` value).
 * - A non-zero exit fails the step with the exit code and the last lines of stderr.
 * - At `timeout` (or the step's timeout, or Ctrl-C) the command gets SIGTERM, then SIGKILL after
 *   `killGrace`; on Linux and macOS its whole process group (the script's own children too).
 */
import { resolve } from "node:path";
import {
  definePlugin,
  runProcess,
  showArgv,
  shellCommand,
  durationOr,
  formatDuration,
  DURATION_SCHEMA,
  createRedactor,
} from "../src/plugin/public.js";

export interface ShellOptions {
  command: (string | number)[];
  cwd?: string;
  env?: Record<string, string>;
  timeout?: string | number;
  killGrace?: string | number;
}

export default definePlugin<ShellOptions>({
  name: "shell",
  description: "Run one command (an argv list, no shell); a non-zero exit fails the step.",
  optionsSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    additionalProperties: false,
    required: ["command"],
    properties: {
      command: {
        type: "array",
        minItems: 1,
        items: { type: ["string", "number"] },
        description:
          'The program and its arguments as a list, e.g. `[node, hooks/app-writes.mjs, "off"]`. Never a shell string: no shell parses it, so `$VAR`, `;` and `|` are passed as written (write `[sh, -c, "…"]` to use a shell on purpose).',
      },
      cwd: {
        type: "string",
        minLength: 1,
        description:
          "Folder to run in, relative to the runbook's folder. Default: the runbook's folder (relative paths in `command` are resolved there).",
      },
      env: {
        type: "object",
        additionalProperties: { type: "string" },
        description:
          "Extra environment variables, merged over syncbook's own environment. Every value is treated as a secret: shown as `***` in the log and in errors.",
      },
      timeout: {
        ...DURATION_SCHEMA,
        description:
          "The command's own time limit: it is stopped (SIGTERM, then SIGKILL after `killGrace`) and the step fails once it has died. Default: none, the step's `timeout` applies.",
      },
      killGrace: {
        ...DURATION_SCHEMA,
        description: "Time between SIGTERM and SIGKILL when the command is stopped (default 5s).",
      },
    },
  },
  hooks: {
    shell: {
      // its command can outlive a runner that is killed (lint: undo-process-without-check)
      startsProcesses: true,
      // what an operator pastes to do it by hand: from the runbook's folder, env values as `***` (secrets)
      command: (o, where) => {
        const env = Object.keys(o.env ?? {}).map((k) => `${k}=***`);
        return `cd ${shellCommand([resolve(where.cwd, o.cwd ?? ".")])} && ${[...env, shellCommand(o.command.map(String))].join(" ")}`;
      },
      run: async (ctx) => {
        const o = ctx.options;
        const argv = o.command.map(String);
        // env values are often secrets that the runbook did not take from `${env.*}`
        const redact = createRedactor(Object.values(o.env ?? {}), ctx.redact);
        // the runbook's folder by default: a runbook must not depend on where syncbook was started
        const cwd = resolve(ctx.cwd, o.cwd ?? ".");
        const env: Record<string, string> = {};
        for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined) env[k] = v;
        Object.assign(env, o.env);
        // the cutover's trace (OpenTelemetry variables set): the command's own spans join it
        if (ctx.traceparent) env.TRACEPARENT = ctx.traceparent;
        ctx.log.debug(redact(`$ ${showArgv(argv)} (in ${cwd})`));
        const r = await runProcess({
          argv,
          cwd,
          env,
          signal: ctx.signal,
          ...(o.timeout !== undefined ? { timeoutMs: durationOr(o.timeout, 0) } : {}),
          killGraceMs: durationOr(o.killGrace, 5000),
          log: ctx.log,
          redact,
        });
        return { summary: redact(`${showArgv(argv)} exited 0 after ${formatDuration(r.durationMs)}`) };
      },
    },
  },
});
