/**
 * The ids of the loader's own findings (YAML syntax, the schema, interpolation, reserved keys,
 * secrets too short to redact, a secret in the runbook's name), as entries of the rule catalogue (`src/lint/catalogue.ts`):
 * `--list-rules` and SARIF list them beside lint's rules.
 */
import type { RuleInfo } from "../diagnostics.js";

export const LOADER_RULES = Object.freeze([
  {
    id: "yaml",
    severity: "error",
    description: "The file is not valid YAML.",
    spec: "A runbook is a YAML document.",
    source: "DESIGN.md",
    hint: "Fix the YAML syntax at the position shown.",
  },
  {
    id: "schema",
    severity: "error",
    description: "The runbook does not match the runbook format (schemas/runbook.schema.json).",
    spec: "The runbook format is schemas/runbook.schema.json; `syncbook schema` prints it.",
    source: "runbook.schema.json",
    hint: "Fix the field named at the position; editors check it as you type with the `$schema` modeline.",
  },
  {
    id: "interpolation",
    severity: "error",
    description: "A `${vars.*}` or `${env.*}` reference is unknown or malformed.",
    spec: "`${vars.x}` and `${env.NAME}` interpolate; values from `env` are secrets by default.",
    source: "DESIGN.md",
    hint: "Declare the variable under `vars:` or pass it with --var name=value.",
  },
  {
    id: "reserved-key",
    severity: "error",
    description: "A key named `__proto__`, `constructor` or `prototype` anywhere in the runbook.",
    spec: "JavaScript gives these names a meaning of their own: `__proto__` replaces an object's prototype, so what lint checks and what is sent would differ.",
    source: "DESIGN.md",
    hint: "Remove or rename the key: no field of the format or of a plugin has this name.",
  },
  {
    id: "secret-too-short",
    severity: "warning",
    description: "An `${env.*}` value shorter than 3 characters: it cannot be redacted from output.",
    spec: "Secrets (values from `${env.*}`) never reach output, journals or reports; a value this short cannot be removed without mangling ordinary text.",
    source: "DESIGN.md",
    hint: "Use a longer secret, or pass a value that is not secret with --var.",
  },
  {
    id: "secret-in-name",
    severity: "error",
    description:
      "The runbook's `name` holds an `${env.*}` (or a `${vars.*}` made of one): the name is the journal folder's name on disk and appears in every report and page.",
    spec: "Secrets (values from `${env.*}`) never reach output, journals or reports; the name becomes the journal folder `.syncbook/<name>/` (which CI uploads) and is shown everywhere, where a secret cannot be redacted.",
    source: "DESIGN.md",
    hint: "Write the name out; for a part that is not a secret, use `${vars.*}` (under `vars:`, or --var name=value).",
  },
] as const satisfies readonly RuleInfo[]);
