/**
 * Passwords are given by reference, never written in the runbook: a cluster's connection string,
 * and any other URL (an instance, the verifier, a hook's or a notifier's address).
 */
import type { LintContext, RuleInfo } from "./context.js";
import { q } from "./context.js";
import { uriPassword } from "../redact.js";

export const rules = [
  {
    id: "uri-literal-password",
    severity: "error",
    description: "A cluster `uri` has a password written in the runbook instead of taken from the environment.",
    spec: "`${vars.x}` and `${env.NAME}` interpolate; values from `env` are secrets by default and never appear in output, journals or reports.",
    source: "DESIGN.md",
    hint: 'Give the connection string by reference: `uri: "${env.SOURCE_URI}"` (or only the password: `mongodb://user:${env.SOURCE_PASSWORD}@host/`), and remove the password from the file and its history.',
  },
  {
    id: "url-literal-password",
    severity: "error",
    description:
      "A URL (an instance, the verifier, a hook's or a notifier's address) has a password written in the runbook instead of taken from the environment.",
    spec: "`${vars.x}` and `${env.NAME}` interpolate; values from `env` are secrets by default and never appear in output, journals or reports.",
    source: "DESIGN.md",
    hint: "Take the password from the environment (write `${env.SYNC_PASSWORD}` where it is, after the user name and `:`), and remove it from the file and its history.",
  },
] as const satisfies readonly RuleInfo[];

/** Only `${env.NAME}` placeholders (a value from the environment, a secret the loader redacts). */
const ENV_ONLY = /^(\$\{\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*\})+$/;
const VAR_REF = /^\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}$/;

export function check(ctx: LintContext): void {
  const fromClusters = new Set<string>();
  for (const name of Object.keys(ctx.runbook.clusters ?? {})) {
    const path = ["clusters", name, "uri"];
    const raw = ctx.rawAt(path);
    if (typeof raw !== "string") continue;
    // a `${vars.x}` reference is a value written in the runbook too (under `vars:`)
    const ref = VAR_REF.exec(raw)?.[1];
    if (ref !== undefined) fromClusters.add(ref);
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
  // every other string of the runbook that is a URL with a password (a var a cluster uses is reported above)
  walkStrings(ctx.loaded.raw, [], (text, path) => {
    if (path[0] === "clusters" || (path[0] === "vars" && fromClusters.has(String(path[1])))) return;
    const password = uriPassword(text.trim());
    if (password === undefined || ENV_ONLY.test(password)) return;
    ctx.report(
      "url-literal-password",
      [...path],
      `The URL at \`${path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")}\` has a password written in the runbook: a runbook is checked in and shown in CI logs.`,
    );
  });
}

/**
 * Calls `visit` with every string of `v` and its path. The path is one array, extended and
 * shortened as the walk goes, not copied for every value (issue 41, lint of a folder):
 * `visit` copies what it keeps.
 */
function walkStrings(
  v: unknown,
  path: (string | number)[],
  visit: (s: string, path: readonly (string | number)[]) => void,
): void {
  if (typeof v === "string") visit(v, path);
  else if (Array.isArray(v))
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      walkStrings(v[i], path, visit);
      path.pop();
    }
  else if (v !== null && typeof v === "object")
    for (const k of Object.keys(v)) {
      path.push(k);
      walkStrings((v as Record<string, unknown>)[k], path, visit);
      path.pop();
    }
}
