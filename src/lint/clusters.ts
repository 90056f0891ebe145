/** Cluster settings: connection strings given by reference, never with a password written in the runbook. */
import type { LintContext, RuleInfo } from "./context.js";
import { q } from "./context.js";
import { uriPassword } from "../redact.js";

export const rules: RuleInfo[] = [
  {
    id: "uri-literal-password",
    severity: "error",
    description: "A cluster `uri` has a password written in the runbook instead of taken from the environment.",
    spec: "`${vars.x}` and `${env.NAME}` interpolate; values from `env` are secrets by default and never appear in output, journals or reports.",
    source: "DESIGN.md",
    hint: 'Give the connection string by reference: `uri: "${env.SOURCE_URI}"` (or only the password: `mongodb://user:${env.SOURCE_PASSWORD}@host/`), and remove the password from the file and its history.',
  },
];

/** Only `${env.NAME}` placeholders (a value from the environment, a secret the loader redacts). */
const ENV_ONLY = /^(\$\{\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*\})+$/;
const VAR_REF = /^\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}$/;

export function check(ctx: LintContext): void {
  for (const name of Object.keys(ctx.runbook.clusters ?? {})) {
    const path = ["clusters", name, "uri"];
    const raw = ctx.rawAt(path);
    if (typeof raw !== "string") continue;
    // a `${vars.x}` reference is a value written in the runbook too (under `vars:`)
    const ref = VAR_REF.exec(raw)?.[1];
    const varValue = ref !== undefined ? ctx.rawAt(["vars", ref]) : undefined;
    const text = typeof varValue === "string" ? varValue : raw;
    const password = uriPassword(text);
    if (password === undefined || ENV_ONLY.test(password)) continue;
    ctx.report(
      "uri-literal-password",
      path,
      `The connection string of cluster ${q(name)} has a password written in the runbook${ref !== undefined ? ` (through \`vars.${ref}\`)` : ""}: a runbook is checked in and shown in CI logs.`,
    );
  }
}
